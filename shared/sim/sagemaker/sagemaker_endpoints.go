package sagemaker

// The endpoint side of SageMakerSim: what the SageMaker control plane,
// Application Auto Scaling and CloudWatch say about an endpoint, served on the
// same listener for the real SDK clients (sagemaker and applicationautoscaling
// speak AWS JSON 1.1 with an X-Amz-Target header; cloudwatch speaks Smithy RPC
// v2 CBOR):
//
//   - SageMaker.DescribeEndpoint and SageMaker.UpdateEndpointWeightsAndCapacities;
//   - AnyScaleFrontendService.DescribeScalableTargets and DescribeScalingActivities;
//   - GraniteServiceVersion20100801 GetMetricData for the AWS/SageMaker metrics
//     ApproximateBacklogSize, ApproximateBacklogSizePerInstance and
//     HasBacklogWithoutCapacity.
//
// An endpoint has production variants with weights and instance counts; a
// real-time call without TargetVariant picks a variant by weight with a seeded
// generator (the same seed gives the same sequence). An async endpoint may
// start at zero instances: its requests wait in a backlog
// (HasBacklogWithoutCapacity = 1) until a simulated instance start (StartDelay)
// brings the first instance back, as the step-scaling policy on that alarm does
// in AWS, and is recorded as a scaling activity.

import (
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// SageMakerEndpoint declares one simulated endpoint.
type SageMakerEndpoint struct {
	Name  string
	Async bool
	// Variants default to one "AllTraffic" variant of weight 1 with one instance.
	Variants []SageMakerVariant
	// MinCapacity and MaxCapacity are the scaling limits DescribeScalableTargets
	// reports for every variant; MaxCapacity 0 means no scalable target.
	MinCapacity, MaxCapacity int
	// StartDelay is how long bringing the first instance of a scaled-to-zero
	// async endpoint takes once work arrives.
	StartDelay time.Duration
}

// SageMakerVariant is one production variant.
type SageMakerVariant struct {
	Name         string
	Weight       float64
	Instances    int
	InstanceType string
}

// Application Auto Scaling's names for a SageMaker variant's instance count.
const (
	smScalingNamespace = "sagemaker"
	smScalableDim      = "sagemaker:variant:DesiredInstanceCount"
)

// smEndpoint is the live state of one simulated endpoint (guarded by SageMakerSim.mu).
type smEndpoint struct {
	spec       SageMakerEndpoint
	variants   []SageMakerVariant
	status     string
	created    time.Time
	modified   time.Time
	backlog    int           // async requests accepted and not yet running
	ready      chan struct{} // closed once an instance serves (async endpoints)
	starting   bool
	activities []map[string]any
}

func (e *smEndpoint) instances() int {
	n := 0
	for _, v := range e.variants {
		n += v.Instances
	}
	return n
}

// initEndpoints builds the endpoint table (called from init, under once).
func (s *SageMakerSim) initEndpoints() {
	s.rng = mrand.New(mrand.NewPCG(s.Seed, s.Seed^0x5eed))
	s.endpoints = map[string]*smEndpoint{}
	now := time.Now().UTC()
	add := func(spec SageMakerEndpoint) {
		if len(spec.Variants) == 0 {
			spec.Variants = []SageMakerVariant{{Name: "AllTraffic", Weight: 1, Instances: 1}}
		}
		vs := append([]SageMakerVariant(nil), spec.Variants...)
		for i := range vs {
			if vs[i].InstanceType == "" {
				vs[i].InstanceType = "ml.m5.large"
			}
		}
		e := &smEndpoint{spec: spec, variants: vs, status: "InService", created: now, modified: now, ready: make(chan struct{})}
		if e.instances() > 0 {
			close(e.ready)
		}
		s.endpoints[spec.Name] = e
	}
	for _, spec := range s.EndpointConfigs {
		add(spec)
	}
	for _, name := range s.Endpoints {
		if _, ok := s.endpoints[name]; !ok {
			add(SageMakerEndpoint{Name: name})
		}
	}
}

// endpoint returns name's state, creating a default one when any name exists (Endpoints nil).
// Call with s.mu held.
func (s *SageMakerSim) endpoint(name string) *smEndpoint {
	if e, ok := s.endpoints[name]; ok {
		return e
	}
	if s.Endpoints != nil || s.EndpointConfigs != nil {
		return nil
	}
	now := time.Now().UTC()
	e := &smEndpoint{spec: SageMakerEndpoint{Name: name}, variants: []SageMakerVariant{{Name: "AllTraffic", Weight: 1, Instances: 1, InstanceType: "ml.m5.large"}},
		status: "InService", created: now, modified: now, ready: make(chan struct{})}
	close(e.ready)
	s.endpoints[name] = e
	return e
}

// pickVariant chooses the variant of a real-time call: the one named, or one
// drawn by weight. ok is false when no variant carries traffic.
func (s *SageMakerSim) pickVariant(name, target string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.endpoint(name)
	if e == nil {
		return "", false
	}
	if target != "" {
		for _, v := range e.variants {
			if v.Name == target {
				return v.Name, true
			}
		}
		return "", false
	}
	total := 0.0
	for _, v := range e.variants {
		total += v.Weight
	}
	if total <= 0 {
		return "", false
	}
	x := s.rng.Float64() * total
	for _, v := range e.variants {
		if x < v.Weight {
			return v.Name, true
		}
		x -= v.Weight
	}
	return e.variants[len(e.variants)-1].Name, true
}

// awaitCapacity is called for each accepted async request: it returns the
// channel closed once an instance serves, starting one when none runs.
func (s *SageMakerSim) awaitCapacity(name string) (ready <-chan struct{}, done func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.endpoint(name)
	if e == nil || !e.spec.Async {
		c := make(chan struct{})
		close(c)
		return c, func() {}
	}
	e.backlog++
	if e.instances() == 0 && !e.starting {
		e.starting = true
		start := time.Now().UTC()
		s.Log.Info("SageMaker SIMULATOR: async endpoint at zero instances has a backlog; starting its first instance", "endpoint", name, "startDelay", e.spec.StartDelay)
		go s.startInstance(name, start)
	}
	return e.ready, func() {
		s.mu.Lock()
		e.backlog--
		s.mu.Unlock()
	}
}

// startInstance simulates the step policy on HasBacklogWithoutCapacity: after
// StartDelay the first variant has one instance and the backlog runs.
func (s *SageMakerSim) startInstance(name string, start time.Time) {
	s.mu.Lock()
	delay := s.endpoints[name].spec.StartDelay
	s.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-s.ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.endpoints[name]
	e.variants[0].Instances = 1
	e.starting = false
	e.modified = time.Now().UTC()
	e.activities = append(e.activities, map[string]any{
		"ActivityId": newUUIDString(), "ServiceNamespace": smScalingNamespace,
		"ResourceId":        "endpoint/" + name + "/variant/" + e.variants[0].Name,
		"ScalableDimension": smScalableDim,
		"Description":       "Setting desired instance count to 1.",
		"Cause":             fmt.Sprintf("monitor alarm %s-has-backlog-without-capacity in state ALARM triggered policy %s-wake-from-zero", name, name),
		"StartTime":         sim.Epoch(start), "EndTime": sim.Epoch(e.modified), "StatusCode": "Successful",
		"StatusMessage": "Successfully set desired instance count to 1. Change successfully fulfilled by sagemaker. (simulated)",
	})
	close(e.ready)
}

// ScaleToZero sets every variant of an async endpoint to zero instances, as
// target tracking on the backlog does after a quiet spell.
func (s *SageMakerSim) ScaleToZero(name string) error {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.endpoint(name)
	if e == nil || !e.spec.Async {
		return fmt.Errorf("sagemaker sim: %s is not a simulated async endpoint", name)
	}
	if e.spec.MinCapacity > 0 {
		return fmt.Errorf("sagemaker sim: %s has MinCapacity %d", name, e.spec.MinCapacity)
	}
	for i := range e.variants {
		e.variants[i].Instances = 0
	}
	e.ready = make(chan struct{})
	return nil
}

// serveControl answers the AWS JSON 1.1 and RPC v2 CBOR calls; false when r is neither.
func (s *SageMakerSim) serveControl(w http.ResponseWriter, r *http.Request) bool {
	target := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(target, "SageMaker."):
		s.serveJSON(w, r, strings.TrimPrefix(target, "SageMaker."), map[string]func(map[string]any) (any, string, string){
			"DescribeEndpoint":                   s.describeEndpoint,
			"UpdateEndpointWeightsAndCapacities": s.updateWeights,
		})
	case strings.HasPrefix(target, "AnyScaleFrontendService."):
		s.serveJSON(w, r, strings.TrimPrefix(target, "AnyScaleFrontendService."), map[string]func(map[string]any) (any, string, string){
			"DescribeScalableTargets":   s.describeScalableTargets,
			"DescribeScalingActivities": s.describeScalingActivities,
		})
	case r.Method == http.MethodPost && r.URL.Path == "/service/GraniteServiceVersion20100801/operation/GetMetricData":
		s.getMetricData(w, r)
	default:
		return false
	}
	return true
}

// serveJSON runs one AWS JSON 1.1 operation; a handler returns (output, error code, message).
func (s *SageMakerSim) serveJSON(w http.ResponseWriter, r *http.Request, op string, ops map[string]func(map[string]any) (any, string, string)) {
	h, ok := ops[op]
	if !ok {
		sim.JSONError(w, "UnknownOperationException", "the SageMaker simulator does not implement "+op)
		return
	}
	var in map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
		sim.JSONError(w, "SerializationException", "request body is not JSON: "+err.Error())
		return
	}
	out, code, msg := h(in)
	if code != "" {
		sim.JSONError(w, code, msg)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(out)
}

func (s *SageMakerSim) notFound(name string) (any, string, string) {
	return nil, "ValidationException", fmt.Sprintf("Could not find endpoint \"arn:aws:sagemaker:%s:%s:endpoint/%s\".", s.Region, s.Account, strings.ToLower(name))
}

// describeEndpoint is DescribeEndpoint.
func (s *SageMakerSim) describeEndpoint(in map[string]any) (any, string, string) {
	name, _ := in["EndpointName"].(string)
	if name == "" || len(name) > smMaxEndpointName || !endpointNamePattern.MatchString(name) {
		return nil, "ValidationException", fmt.Sprintf("1 validation error detected: Value '%s' at 'endpointName' failed to satisfy constraint", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.endpoint(name)
	if e == nil {
		return s.notFound(name)
	}
	var vs []map[string]any
	for _, v := range e.variants {
		vs = append(vs, map[string]any{
			"VariantName": v.Name, "CurrentWeight": v.Weight, "DesiredWeight": v.Weight,
			"CurrentInstanceCount": v.Instances, "DesiredInstanceCount": v.Instances,
			"DeployedImages": []map[string]any{{"SpecifiedImage": "simulated.dkr.ecr.invalid/model:latest"}},
		})
	}
	out := map[string]any{
		"EndpointName": name, "EndpointArn": fmt.Sprintf("arn:aws:sagemaker:%s:%s:endpoint/%s", s.Region, s.Account, strings.ToLower(name)),
		"EndpointConfigName": name + "-config", "EndpointStatus": e.status, "ProductionVariants": vs,
		"CreationTime": sim.Epoch(e.created), "LastModifiedTime": sim.Epoch(e.modified),
	}
	if e.spec.Async {
		out["AsyncInferenceConfig"] = map[string]any{"OutputConfig": map[string]any{
			"S3OutputPath": s.OutputPrefix, "S3FailurePath": s.FailurePrefix,
			"NotificationConfig": map[string]any{"SuccessTopic": s.SuccessTopicARN, "ErrorTopic": s.ErrorTopicARN},
		}}
	}
	return out, "", ""
}

// updateWeights is UpdateEndpointWeightsAndCapacities, with its documented
// rules: 1..10 entries, each naming an existing variant, DesiredWeight ≥ 0,
// DesiredInstanceCount ≥ 0, the endpoint InService.
func (s *SageMakerSim) updateWeights(in map[string]any) (any, string, string) {
	name, _ := in["EndpointName"].(string)
	list, _ := in["DesiredWeightsAndCapacities"].([]any)
	if len(list) < 1 || len(list) > smMaxVariants {
		return nil, "ValidationException", fmt.Sprintf("1 validation error detected: Value at 'desiredWeightsAndCapacities' failed to satisfy constraint: Member must have length between 1 and %d", smMaxVariants)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.endpoint(name)
	if e == nil {
		return s.notFound(name)
	}
	if e.status != "InService" {
		return nil, "ValidationException", fmt.Sprintf("Cannot update in-progress endpoint \"%s\".", name)
	}
	next := append([]SageMakerVariant(nil), e.variants...)
	for _, item := range list {
		m, _ := item.(map[string]any)
		vn, _ := m["VariantName"].(string)
		idx := -1
		for i, v := range next {
			if v.Name == vn {
				idx = i
			}
		}
		if idx < 0 {
			return nil, "ValidationException", fmt.Sprintf("The variant name(s) [%s] is/are not present in the endpoint \"%s\".", vn, name)
		}
		if w, ok := m["DesiredWeight"].(float64); ok {
			if w < 0 {
				return nil, "ValidationException", "DesiredWeight must be at least 0"
			}
			next[idx].Weight = w
		}
		if c, ok := m["DesiredInstanceCount"].(float64); ok {
			if c < 0 || c != float64(int(c)) {
				return nil, "ValidationException", "DesiredInstanceCount must be a whole number of at least 0"
			}
			next[idx].Instances = int(c)
		}
	}
	e.variants, e.modified = next, time.Now().UTC()
	return map[string]any{"EndpointArn": fmt.Sprintf("arn:aws:sagemaker:%s:%s:endpoint/%s", s.Region, s.Account, strings.ToLower(name))}, "", ""
}

// variantsOf maps a ResourceId endpoint/<name>/variant/<variant> to its endpoint. Call with s.mu held.
func (s *SageMakerSim) variantOf(id string) (*smEndpoint, string, bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 4 || parts[0] != "endpoint" || parts[2] != "variant" {
		return nil, "", false
	}
	e, ok := s.endpoints[parts[1]]
	return e, parts[3], ok
}

// describeScalableTargets is DescribeScalableTargets for the sagemaker namespace.
func (s *SageMakerSim) describeScalableTargets(in map[string]any) (any, string, string) {
	if ns, _ := in["ServiceNamespace"].(string); ns != smScalingNamespace {
		return nil, "ValidationException", "the simulator serves ServiceNamespace sagemaker only"
	}
	ids, _ := in["ResourceIds"].([]any)
	s.mu.Lock()
	defer s.mu.Unlock()
	targets := []map[string]any{}
	for _, raw := range ids {
		id, _ := raw.(string)
		e, variant, ok := s.variantOf(id)
		if !ok || e.spec.MaxCapacity == 0 {
			continue
		}
		for _, v := range e.variants {
			if v.Name == variant {
				targets = append(targets, map[string]any{
					"ServiceNamespace": smScalingNamespace, "ResourceId": id, "ScalableDimension": smScalableDim,
					"MinCapacity": e.spec.MinCapacity, "MaxCapacity": e.spec.MaxCapacity, "CreationTime": sim.Epoch(e.created),
					"RoleARN": fmt.Sprintf("arn:aws:iam::%s:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint", s.Account),
				})
			}
		}
	}
	return map[string]any{"ScalableTargets": targets}, "", ""
}

// describeScalingActivities is DescribeScalingActivities, newest first.
func (s *SageMakerSim) describeScalingActivities(in map[string]any) (any, string, string) {
	id, _ := in["ResourceId"].(string)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	if e, _, ok := s.variantOf(id); ok {
		for i := len(e.activities) - 1; i >= 0; i-- {
			if e.activities[i]["ResourceId"] == id {
				out = append(out, e.activities[i])
			}
		}
	}
	return map[string]any{"ScalingActivities": out}, "", ""
}

// getMetricData is CloudWatch GetMetricData (RPC v2 CBOR) for the async
// backlog metrics of AWS/SageMaker: one datapoint, now, per query.
func (s *SageMakerSim) getMetricData(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		cborError(w, "InvalidParameterValue", "reading body: "+err.Error())
		return
	}
	v, err := cbor.Decode(raw)
	in, ok := v.(cbor.Map)
	if err != nil || !ok {
		cborError(w, "InvalidParameterValue", "request body is not a CBOR map")
		return
	}
	queries, _ := in["MetricDataQueries"].(cbor.List)
	if len(queries) == 0 || len(queries) > 500 {
		cborError(w, "InvalidParameterValue", "MetricDataQueries must hold 1..500 queries")
		return
	}
	now := float64(time.Now().Unix())
	results := cbor.List{}
	s.mu.Lock()
	for _, q := range queries {
		qm, _ := q.(cbor.Map)
		id := str(qm["Id"])
		stat, _ := qm["MetricStat"].(cbor.Map)
		metric, _ := stat["Metric"].(cbor.Map)
		endpoint := ""
		dims, _ := metric["Dimensions"].(cbor.List)
		for _, d := range dims {
			dm, _ := d.(cbor.Map)
			if str(dm["Name"]) == "EndpointName" {
				endpoint = str(dm["Value"])
			}
		}
		res := cbor.Map{"Id": cbor.String(id), "Label": cbor.String(str(metric["MetricName"])), "StatusCode": cbor.String("Complete"),
			"Timestamps": cbor.List{}, "Values": cbor.List{}}
		if e, ok := s.endpoints[endpoint]; ok && e.spec.Async && str(metric["Namespace"]) == "AWS/SageMaker" {
			var val float64
			switch str(metric["MetricName"]) {
			case "ApproximateBacklogSize":
				val = float64(e.backlog)
			case "ApproximateBacklogSizePerInstance":
				val = float64(e.backlog) / float64(max(e.instances(), 1))
			case "HasBacklogWithoutCapacity":
				if e.backlog > 0 && e.instances() == 0 {
					val = 1
				}
			default:
				results = append(results, res)
				continue
			}
			res["Timestamps"] = cbor.List{&cbor.Tag{ID: 1, Value: cbor.Float64(now)}}
			res["Values"] = cbor.List{cbor.Float64(val)}
		}
		results = append(results, res)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/cbor")
	w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(cbor.Encode(cbor.Map{"MetricDataResults": results, "Messages": cbor.List{}}))
}

func str(v cbor.Value) string {
	s, _ := v.(cbor.String)
	return string(s)
}

func cborError(w http.ResponseWriter, code, msg string) {
	w.Header().Set("Content-Type", "application/cbor")
	w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(cbor.Encode(cbor.Map{"__type": cbor.String(code), "message": cbor.String(msg)}))
}

// DeleteEndpoint removes an endpoint, as `aws sagemaker delete-endpoint` does:
// later calls to it are answered "not found".
func (s *SageMakerSim) DeleteEndpoint(name string) {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.endpoints, name)
	s.Endpoints = slices.DeleteFunc(slices.Clone(s.Endpoints), func(e string) bool { return e == name })
	if s.Endpoints == nil {
		s.Endpoints = []string{}
	}
}
