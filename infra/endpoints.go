package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapplicationautoscaling"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssagemaker"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// SageMaker endpoints as code. Context sagemakerDeploy is a JSON array (or a
// string holding one) with one entry per endpoint the stack creates (none by
// default); sagemakerOperators lists the owners who may shift traffic.
const (
	CtxSageMakerDeploy    = "sagemakerDeploy"
	CtxSageMakerOperators = "sagemakerOperators"

	KindAsync    = "async"
	KindRealtime = "realtime"
)

// Defaults of an endpoint entry. The real-time target and cooldowns follow the
// SageMaker auto scaling guide (SageMakerVariantInvocationsPerInstance ≈ 70 per
// minute; scale out after 60 s, in after 300 s); the async backlog target and
// the wake-up step follow the async inference autoscaling guide
// (https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html,
// https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-add-code-define.html, read 2026-11-30).
const (
	defaultInvocationsPerInstance = 70
	defaultBacklogPerInstance     = 5
	defaultMaxConcurrentPerInst   = 4
	defaultMaxCapacity            = 2
	scaleOutCooldownS             = 60
	scaleInCooldownS              = 300
)

// Documented limits (CreateEndpointConfig, AsyncInferenceClientConfig,
// InvokeEndpointAsync API references, read 2026-11-30).
const (
	maxVariants                 = 10
	maxConcurrentPerInstanceCap = 1000
	maxInvocationTimeoutS       = 3600
)

// EndpointSpec is one sagemakerDeploy entry.
type EndpointSpec struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // async | realtime
	// The model of every variant that does not set its own.
	Image            string `json:"image"`
	ModelDataURL     string `json:"model_data_url,omitempty"`
	MultiModelPrefix string `json:"multi_model_prefix,omitempty"` // Mode MultiModel: s3://bucket/prefix/
	InstanceType     string `json:"instance_type"`
	InstanceCount    int    `json:"instance_count,omitempty"` // initial, default 1
	// Variants default to one AllTraffic variant of the model above.
	Variants    []VariantSpec `json:"variants,omitempty"`
	MaxCapacity int           `json:"max_capacity,omitempty"` // instances per variant, default 2
	// Async only: KeepWarm keeps one instance (MinCapacity 1) instead of scaling to zero.
	KeepWarm                 bool    `json:"keep_warm,omitempty"`
	MaxConcurrentPerInstance int     `json:"max_concurrent_invocations_per_instance,omitempty"`
	InvocationTimeoutS       int     `json:"invocation_timeout_s,omitempty"`
	BacklogPerInstance       float64 `json:"backlog_per_instance,omitempty"`
	InvocationsPerInstance   float64 `json:"invocations_per_instance,omitempty"` // real-time
	LatencyP99Ms             float64 `json:"latency_p99_ms,omitempty"`           // real-time, optional second policy
}

// VariantSpec is one production variant.
type VariantSpec struct {
	Name             string  `json:"name"`
	Weight           float64 `json:"weight"`
	Image            string  `json:"image,omitempty"`
	ModelDataURL     string  `json:"model_data_url,omitempty"`
	MultiModelPrefix string  `json:"multi_model_prefix,omitempty"`
	InstanceType     string  `json:"instance_type,omitempty"`
	InstanceCount    int     `json:"instance_count,omitempty"`
}

var (
	// ECR image URIs: the execution role's pull grant names the repository.
	ecrImagePattern    = regexp.MustCompile(`^([0-9]{12})\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?/([a-z0-9][a-z0-9._/-]*)(?::[\w.-]+|@sha256:[a-f0-9]{64})?$`)
	s3URLPattern       = regexp.MustCompile(`^s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])/(.+)$`)
	instanceTypePatten = regexp.MustCompile(`^ml\.[a-z0-9]+\.[a-z0-9]+$`)
	variantNamePattern = regexp.MustCompile(`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$`)
)

// readEndpointSettings reads sagemakerDeploy and sagemakerOperators, and adds
// every deployed endpoint to the invoke allow-list.
func readEndpointSettings(node constructs.Node, s *Settings) error {
	var errs []error
	var raw []byte
	switch t := node.TryGetContext(jsii.String(CtxSageMakerDeploy)).(type) {
	case nil:
	case string:
		if strings.TrimSpace(t) != "" {
			raw = []byte(t)
		}
	case []interface{}:
		raw, _ = json.Marshal(t)
	default:
		errs = append(errs, fmt.Errorf("context %s: want a JSON array of endpoints, got %T", CtxSageMakerDeploy, t))
	}
	if raw != nil {
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s.SageMakerDeploy); err != nil {
			errs = append(errs, fmt.Errorf("context %s: %w (see infra/README.md, SageMaker endpoints)", CtxSageMakerDeploy, err))
		}
	}
	switch t := node.TryGetContext(jsii.String(CtxSageMakerOperators)).(type) {
	case nil:
	case string:
		s.SageMakerOperators = config.List(t)
	case []interface{}:
		for _, e := range t {
			es, ok := e.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("context %s: list element %v is not a string", CtxSageMakerOperators, e))
				continue
			}
			s.SageMakerOperators = append(s.SageMakerOperators, config.List(es)...)
		}
	default:
		errs = append(errs, fmt.Errorf("context %s: want a comma list, got %T", CtxSageMakerOperators, t))
	}
	s.SageMakerEndpoints = withDeployed(s.SageMakerEndpoints, s.SageMakerDeploy)
	return errors.Join(errs...)
}

// withDeployed adds the deployed endpoints' names to the allow-list once.
func withDeployed(allowed []string, specs []EndpointSpec) []string {
	out := slices.Clone(allowed)
	for _, e := range specs {
		if !slices.ContainsFunc(out, func(a string) bool { return strings.EqualFold(a, e.Name) }) {
			out = append(out, e.Name)
		}
	}
	return out
}

// variants returns the entry's variants with every default filled in.
func (e EndpointSpec) variants() []VariantSpec {
	vs := e.Variants
	if len(vs) == 0 {
		vs = []VariantSpec{{Name: "AllTraffic", Weight: 1}}
	}
	out := make([]VariantSpec, len(vs))
	for i, v := range vs {
		if v.Image == "" {
			v.Image = e.Image
		}
		if v.ModelDataURL == "" && v.MultiModelPrefix == "" {
			v.ModelDataURL, v.MultiModelPrefix = e.ModelDataURL, e.MultiModelPrefix
		}
		if v.InstanceType == "" {
			v.InstanceType = e.InstanceType
		}
		if v.InstanceCount == 0 {
			v.InstanceCount = max(e.InstanceCount, 1)
		}
		out[i] = v
	}
	return out
}

func (e EndpointSpec) minCapacity(v VariantSpec) int {
	if e.Kind == KindAsync {
		if e.KeepWarm {
			return 1
		}
		return 0
	}
	return v.InstanceCount
}

func (e EndpointSpec) maxCapacity(v VariantSpec) int {
	if e.MaxCapacity > 0 {
		return e.MaxCapacity
	}
	return max(defaultMaxCapacity, v.InstanceCount)
}

// validateEndpoints checks every entry; each error names the entry and the field.
func (s Settings) validateEndpoints() []error {
	var errs []error
	seen := map[string]bool{}
	for i, e := range s.SageMakerDeploy {
		at := fmt.Sprintf("%s[%d]", CtxSageMakerDeploy, i)
		bad := func(field, format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s.%s: %s", at, field, fmt.Sprintf(format, args...)))
		}
		if !sageMakerEndpointPattern.MatchString(e.Name) {
			bad("name", "%q is not a SageMaker endpoint name (letters, digits and inner dashes, up to 63)", e.Name)
		}
		if seen[strings.ToLower(e.Name)] {
			bad("name", "%q is deployed twice", e.Name)
		}
		seen[strings.ToLower(e.Name)] = true
		if e.Kind != KindAsync && e.Kind != KindRealtime {
			bad("kind", "%q: want %s or %s", e.Kind, KindAsync, KindRealtime)
		}
		vs := e.variants()
		if len(vs) > maxVariants {
			bad("variants", "%d variants is over SageMaker's %d per endpoint config", len(vs), maxVariants)
		}
		// Stricter reading: the async guide's scaling (backlog per endpoint) and
		// examples use one variant; a weighted split of a queue is not documented.
		if e.Kind == KindAsync && len(vs) != 1 {
			bad("variants", "an async endpoint takes one production variant (got %d)", len(vs))
		}
		total := 0.0
		names := map[string]bool{}
		for j, v := range vs {
			vat := fmt.Sprintf("variants[%d]", j)
			if !variantNamePattern.MatchString(v.Name) {
				bad(vat+".name", "%q is not a variant name (letters, digits and inner dashes, up to 63)", v.Name)
			}
			if names[v.Name] {
				bad(vat+".name", "%q is used twice", v.Name)
			}
			names[v.Name] = true
			if v.Weight < 0 {
				bad(vat+".weight", "must be 0 or more (got %v)", v.Weight)
			}
			total += v.Weight
			if !ecrImagePattern.MatchString(v.Image) {
				bad(vat+".image", "%q: want an ECR image URI <account>.dkr.ecr.<region>.amazonaws.com/<repository>[:tag|@sha256:digest]", v.Image)
			}
			switch {
			case v.ModelDataURL != "" && v.MultiModelPrefix != "":
				bad(vat+".model_data_url", "give model_data_url or multi_model_prefix, not both")
			case v.ModelDataURL == "" && v.MultiModelPrefix == "":
				bad(vat+".model_data_url", "required: s3://bucket/key of the model archive (or multi_model_prefix)")
			case v.ModelDataURL != "" && !s3URLPattern.MatchString(v.ModelDataURL):
				bad(vat+".model_data_url", "%q: want s3://bucket/key", v.ModelDataURL)
			case v.MultiModelPrefix != "" && (!s3URLPattern.MatchString(v.MultiModelPrefix) || !strings.HasSuffix(v.MultiModelPrefix, "/")):
				bad(vat+".multi_model_prefix", "%q: want s3://bucket/prefix/ (ending in /)", v.MultiModelPrefix)
			case v.MultiModelPrefix != "" && e.Kind == KindAsync:
				bad(vat+".multi_model_prefix", "multi-model endpoints are real-time only")
			}
			if !instanceTypePatten.MatchString(v.InstanceType) {
				bad(vat+".instance_type", "%q: want an ml.* instance type such as ml.m5.large", v.InstanceType)
			}
			if v.InstanceCount < 1 {
				bad(vat+".instance_count", "must be at least 1 (an async endpoint scales to zero after it starts)")
			}
			if lo, hi := e.minCapacity(v), e.maxCapacity(v); hi < max(lo, 1) {
				bad("max_capacity", "%d is under the minimum %d", hi, max(lo, 1))
			}
		}
		if total <= 0 {
			bad("variants", "the weights leave no variant any traffic")
		}
		if n := e.MaxConcurrentPerInstance; n < 0 || n > maxConcurrentPerInstanceCap {
			bad("max_concurrent_invocations_per_instance", "want 1..%d (got %d)", maxConcurrentPerInstanceCap, n)
		}
		if t := e.InvocationTimeoutS; t < 0 || t > maxInvocationTimeoutS {
			bad("invocation_timeout_s", "want 1..%d seconds (got %d)", maxInvocationTimeoutS, t)
		}
		if e.Kind == KindRealtime && (e.KeepWarm || e.MaxConcurrentPerInstance != 0 || e.InvocationTimeoutS != 0 || e.BacklogPerInstance != 0) {
			bad("kind", "keep_warm, max_concurrent_invocations_per_instance, invocation_timeout_s and backlog_per_instance apply to async endpoints")
		}
		if e.Kind == KindAsync && (e.InvocationsPerInstance != 0 || e.LatencyP99Ms != 0) {
			bad("kind", "invocations_per_instance and latency_p99_ms apply to real-time endpoints")
		}
		if e.BacklogPerInstance < 0 || e.InvocationsPerInstance < 0 || e.LatencyP99Ms < 0 {
			bad("scaling", "targets must be positive")
		}
	}
	for _, o := range s.SageMakerOperators {
		if strings.TrimSpace(o) == "" || strings.ContainsAny(o, ", ") {
			errs = append(errs, fmt.Errorf("%s: %q is not an owner (an IAM principal ARN, or an API key name in token mode)", CtxSageMakerOperators, o))
		}
	}
	return errs
}

// EndpointsProps connect the endpoints to the suite.
type EndpointsProps struct {
	Settings   Settings
	Data       *Data
	SageMaker  *SageMaker
	Functions  *Functions
	Reconciler *Reconciler
	Providers  *Providers
}

// Endpoints are the deployed SageMaker endpoints and the grants that let the
// suite describe, steer and (from the reconciler) re-send to them.
type Endpoints struct {
	Scope     constructs.Construct
	Endpoints map[string]*Endpoint
}

// Endpoint is one deployed endpoint.
type Endpoint struct {
	Spec     EndpointSpec
	Role     awsiam.Role
	Models   []awssagemaker.CfnModel
	Config   awssagemaker.CfnEndpointConfig
	Endpoint awssagemaker.CfnEndpoint
	Targets  []awsapplicationautoscaling.CfnScalableTarget
	Policies []awsapplicationautoscaling.CfnScalingPolicy
	// WakeAlarm is the HasBacklogWithoutCapacity alarm of an async endpoint.
	WakeAlarm awscloudwatch.CfnAlarm
}

// NewEndpoints creates every sagemakerDeploy entry and grants the functions
// what the endpoint tools and the reconciler call.
func NewEndpoints(scope constructs.Construct, id string, p *EndpointsProps) *Endpoints {
	c := constructs.NewConstruct(scope, jsii.String(id))
	es := &Endpoints{Scope: c, Endpoints: map[string]*Endpoint{}}
	async := false
	for _, spec := range p.Settings.SageMakerDeploy {
		es.Endpoints[spec.Name] = newEndpoint(c, spec, p)
		async = async || spec.Kind == KindAsync
	}
	es.grant(p, async)
	awscdk.Aspects_Of(awscdk.Stack_Of(c)).Add(&overflowSuppressions{stack: *awscdk.Stack_Of(c).StackName()}, &awscdk.AspectOptions{Priority: jsii.Number(overflowSuppressionsPriority)})
	return es
}

func newEndpoint(scope constructs.Construct, spec EndpointSpec, p *EndpointsProps) *Endpoint {
	c := constructs.NewConstruct(scope, jsii.String(spec.Name))
	stack := awscdk.Stack_Of(c)
	ep := &Endpoint{Spec: spec}
	ep.Role = executionRole(c, spec, p)
	vs := spec.variants()
	var variants []interface{}
	for _, v := range vs {
		mode := "SingleModel"
		data := v.ModelDataURL
		if v.MultiModelPrefix != "" {
			mode, data = "MultiModel", v.MultiModelPrefix
		}
		m := awssagemaker.NewCfnModel(c, jsii.String("Model"+v.Name), &awssagemaker.CfnModelProps{
			ExecutionRoleArn: ep.Role.RoleArn(),
			PrimaryContainer: &awssagemaker.CfnModel_ContainerDefinitionProperty{Image: jsii.String(v.Image), ModelDataUrl: jsii.String(data), Mode: jsii.String(mode)},
		})
		ep.Models = append(ep.Models, m)
		variants = append(variants, &awssagemaker.CfnEndpointConfig_ProductionVariantProperty{
			VariantName: jsii.String(v.Name), ModelName: m.AttrModelName(), InstanceType: jsii.String(v.InstanceType),
			InitialInstanceCount: jsii.Number(float64(v.InstanceCount)), InitialVariantWeight: jsii.Number(v.Weight),
		})
	}
	cfg := &awssagemaker.CfnEndpointConfigProps{ProductionVariants: &variants}
	if spec.Kind == KindAsync {
		d := p.Data
		cfg.AsyncInferenceConfig = &awssagemaker.CfnEndpointConfig_AsyncInferenceConfigProperty{
			OutputConfig: &awssagemaker.CfnEndpointConfig_AsyncInferenceOutputConfigProperty{
				S3OutputPath:  jsii.String("s3://" + *d.Bucket.BucketName() + "/" + config.SageMakerOutputPrefix),
				S3FailurePath: jsii.String("s3://" + *d.Bucket.BucketName() + "/" + config.SageMakerFailurePrefix),
				KmsKeyId:      p.SageMaker.Key.KeyArn(),
				NotificationConfig: &awssagemaker.CfnEndpointConfig_AsyncInferenceNotificationConfigProperty{
					SuccessTopic: p.SageMaker.SuccessTopic.TopicArn(), ErrorTopic: p.SageMaker.ErrorTopic.TopicArn(),
					IncludeInferenceResponseIn: jsii.Strings("SUCCESS_NOTIFICATION_TOPIC"),
				},
			},
			ClientConfig: &awssagemaker.CfnEndpointConfig_AsyncInferenceClientConfigProperty{
				MaxConcurrentInvocationsPerInstance: jsii.Number(float64(orDefault(spec.MaxConcurrentPerInstance, defaultMaxConcurrentPerInst))),
			},
		}
	}
	ep.Config = awssagemaker.NewCfnEndpointConfig(c, jsii.String("Config"), cfg)
	ep.Endpoint = awssagemaker.NewCfnEndpoint(c, jsii.String("Endpoint"), &awssagemaker.CfnEndpointProps{
		EndpointName: jsii.String(spec.Name), EndpointConfigName: ep.Config.AttrEndpointConfigName(),
	})
	for _, v := range vs {
		ep.scale(c, stack, v)
	}
	return ep
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// executionRole is the endpoint's least-privilege role: its model data, its
// image repository, its logs and metrics, and for async endpoints the staged
// input, the output prefixes, the topics and their key.
func executionRole(c constructs.Construct, spec EndpointSpec, p *EndpointsProps) awsiam.Role {
	stack := awscdk.Stack_Of(c)
	var objects, repos, buckets []*string
	var prefixes []string
	for _, v := range spec.variants() {
		if m := s3URLPattern.FindStringSubmatch(v.ModelDataURL); m != nil {
			objects = appendUnique(objects, "arn:"+*stack.Partition()+":s3:::"+m[1]+"/"+m[2])
		}
		if m := s3URLPattern.FindStringSubmatch(v.MultiModelPrefix); m != nil {
			objects = appendUnique(objects, "arn:"+*stack.Partition()+":s3:::"+m[1]+"/"+m[2]+"*")
			buckets = appendUnique(buckets, "arn:"+*stack.Partition()+":s3:::"+m[1])
			prefixes = append(prefixes, m[2]+"*")
		}
		if m := ecrImagePattern.FindStringSubmatch(v.Image); m != nil {
			repos = appendUnique(repos, "arn:"+*stack.Partition()+":ecr:"+m[2]+":"+m[1]+":repository/"+m[3])
		}
	}
	stmts := []awsiam.PolicyStatement{allow("ReadModelData", []string{"s3:GetObject"}, objects, nil)}
	if len(buckets) > 0 {
		// A multi-model endpoint lists its prefix to find the model a TargetModel names.
		stmts = append(stmts, allow("ListModelPrefix", []string{"s3:ListBucket"}, buckets,
			map[string]interface{}{"StringLike": map[string]interface{}{"s3:prefix": jsii.Strings(prefixes...)}}))
	}
	logGroup := "arn:" + *stack.Partition() + ":logs:" + *stack.Region() + ":" + *stack.Account() + ":log-group:/aws/sagemaker/Endpoints/" + spec.Name
	stmts = append(stmts,
		allow("PullImage", []string{"ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"}, repos, nil),
		allow("EcrToken", []string{"ecr:GetAuthorizationToken"}, []*string{jsii.String("*")}, nil),
		allow("EndpointLogs", []string{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"},
			[]*string{jsii.String(logGroup), jsii.String(logGroup + ":log-stream:*")}, nil),
		allow("EndpointMetrics", []string{"cloudwatch:PutMetricData"}, []*string{jsii.String("*")},
			map[string]interface{}{"StringEquals": map[string]interface{}{"cloudwatch:namespace": "/aws/sagemaker/Endpoints"}}))
	if spec.Kind == KindAsync {
		d, sm := p.Data, p.SageMaker
		stmts = append(stmts,
			allow("ReadStagedInput", []string{"s3:GetObject"}, d.ObjectArns(config.SageMakerInputPrefix), nil),
			allow("WriteOutputAndFailure", []string{"s3:PutObject"}, d.ObjectArns(config.SageMakerOutputPrefix, config.SageMakerFailurePrefix), nil),
			allow("Notify", []string{"sns:Publish"}, []*string{sm.SuccessTopic.TopicArn(), sm.ErrorTopic.TopicArn()}, nil),
			// The outputs and the topics are encrypted with the suite's key.
			allow("EncryptOutputAndNotifications", []string{"kms:GenerateDataKey", "kms:Decrypt"}, []*string{sm.Key.KeyArn()}, nil))
	}
	// Inline on the role: the models' GetAtt of the role then also orders them
	// after the permissions SageMaker checks when it creates a model.
	role := awsiam.NewRole(c, jsii.String("ExecutionRole"), &awsiam.RoleProps{
		Description: jsii.String("mcpbatch SageMaker endpoint " + spec.Name + " (models, image, logs, async output)"),
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("sagemaker.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: &map[string]interface{}{"StringEquals": map[string]interface{}{"aws:SourceAccount": stack.Account()}},
		}),
		InlinePolicies: &map[string]awsiam.PolicyDocument{"endpoint": awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &stmts})},
	})
	suppressWildcards(role, wildSageMakerObjects, wildEcrToken, wildEndpointLogs, wildModelPrefix)
	return role
}

func appendUnique(l []*string, s string) []*string {
	if slices.ContainsFunc(l, func(x *string) bool { return *x == s }) {
		return l
	}
	return append(l, jsii.String(s))
}

var (
	wildEcrToken = wildcard{
		pattern: `/^Resource::\*$/`,
		reason: "ecr:GetAuthorizationToken and cloudwatch:PutMetricData have no resource type in the IAM service " +
			"authorization reference (Resource \"*\" only); the image pull itself is limited to the named repositories " +
			"and the metrics to the /aws/sagemaker/Endpoints namespace.",
	}
	wildEndpointLogs = wildcard{
		pattern: `/^Resource::arn:<AWS::Partition>:logs:.*:log-group:\/aws\/sagemaker\/Endpoints\/[A-Za-z0-9-]+:log-stream:\*$/`,
		reason: "SageMaker names one log stream per variant and instance at run time; the grant is limited to the " +
			"endpoint's own log group.",
	}
	wildModelPrefix = wildcard{
		pattern: `/^Resource::arn:<AWS::Partition>:s3:::[a-z0-9.-]+\/.*\*$/`,
		reason: "A multi-model endpoint loads the model a request's TargetModel names from under its model prefix; " +
			"the models are added at run time, so the grant is the one prefix the entry names.",
	}
)

// scale registers the variant with Application Auto Scaling and attaches the
// policies of its kind. No RoleARN: Application Auto Scaling uses (and creates)
// its service-linked role for SageMaker.
func (ep *Endpoint) scale(c constructs.Construct, stack awscdk.Stack, v VariantSpec) {
	spec := ep.Spec
	resource := "endpoint/" + spec.Name + "/variant/" + v.Name
	t := awsapplicationautoscaling.NewCfnScalableTarget(c, jsii.String("Target"+v.Name), &awsapplicationautoscaling.CfnScalableTargetProps{
		ServiceNamespace: jsii.String("sagemaker"), ScalableDimension: jsii.String("sagemaker:variant:DesiredInstanceCount"),
		ResourceId: jsii.String(resource), MinCapacity: jsii.Number(float64(spec.minCapacity(v))), MaxCapacity: jsii.Number(float64(spec.maxCapacity(v))),
	})
	t.AddDependency(ep.Endpoint)
	ep.Targets = append(ep.Targets, t)
	policy := func(id, name string, tt *awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingScalingPolicyConfigurationProperty,
		step *awsapplicationautoscaling.CfnScalingPolicy_StepScalingPolicyConfigurationProperty) awsapplicationautoscaling.CfnScalingPolicy {
		props := &awsapplicationautoscaling.CfnScalingPolicyProps{PolicyName: jsii.String(spec.Name + "-" + v.Name + "-" + name), ScalingTargetId: t.Ref()}
		if tt != nil {
			props.PolicyType, props.TargetTrackingScalingPolicyConfiguration = jsii.String("TargetTrackingScaling"), tt
		} else {
			props.PolicyType, props.StepScalingPolicyConfiguration = jsii.String("StepScaling"), step
		}
		p := awsapplicationautoscaling.NewCfnScalingPolicy(c, jsii.String(id+v.Name), props)
		ep.Policies = append(ep.Policies, p)
		return p
	}
	endpointDim := &awsapplicationautoscaling.CfnScalingPolicy_MetricDimensionProperty{Name: jsii.String("EndpointName"), Value: jsii.String(spec.Name)}
	if spec.Kind == KindAsync {
		target := spec.BacklogPerInstance
		if target == 0 {
			target = defaultBacklogPerInstance
		}
		policy("Backlog", "backlog", &awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingScalingPolicyConfigurationProperty{
			TargetValue: jsii.Number(target), ScaleOutCooldown: jsii.Number(scaleOutCooldownS), ScaleInCooldown: jsii.Number(scaleInCooldownS),
			CustomizedMetricSpecification: &awsapplicationautoscaling.CfnScalingPolicy_CustomizedMetricSpecificationProperty{
				MetricName: jsii.String("ApproximateBacklogSizePerInstance"), Namespace: jsii.String("AWS/SageMaker"),
				Dimensions: &[]interface{}{endpointDim}, Statistic: jsii.String("Average"),
			},
		}, nil)
		// Target tracking cannot leave zero (no instance, no per-instance metric): a
		// step policy on HasBacklogWithoutCapacity brings the first instance back.
		wake := policy("Wake", "wake-from-zero", nil, &awsapplicationautoscaling.CfnScalingPolicy_StepScalingPolicyConfigurationProperty{
			AdjustmentType: jsii.String("ChangeInCapacity"), MetricAggregationType: jsii.String("Average"), Cooldown: jsii.Number(scaleInCooldownS),
			StepAdjustments: &[]interface{}{&awsapplicationautoscaling.CfnScalingPolicy_StepAdjustmentProperty{
				MetricIntervalLowerBound: jsii.Number(0), ScalingAdjustment: jsii.Number(1),
			}},
		})
		ep.WakeAlarm = awscloudwatch.NewCfnAlarm(c, jsii.String("HasBacklogWithoutCapacity"), &awscloudwatch.CfnAlarmProps{
			AlarmDescription: jsii.String("mcpbatch: async endpoint " + spec.Name + " has requests and no instance: start one"),
			Namespace:        jsii.String("AWS/SageMaker"), MetricName: jsii.String("HasBacklogWithoutCapacity"),
			Dimensions: &[]interface{}{&awscloudwatch.CfnAlarm_DimensionProperty{Name: jsii.String("EndpointName"), Value: jsii.String(spec.Name)}},
			Statistic:  jsii.String("Average"), Period: jsii.Number(60), EvaluationPeriods: jsii.Number(2), DatapointsToAlarm: jsii.Number(2),
			Threshold: jsii.Number(1), ComparisonOperator: jsii.String("GreaterThanOrEqualToThreshold"),
			TreatMissingData: jsii.String("missing"),
			AlarmActions:     &[]interface{}{wake.Ref()},
		})
		return
	}
	target := spec.InvocationsPerInstance
	if target == 0 {
		target = defaultInvocationsPerInstance
	}
	policy("Invocations", "invocations", &awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingScalingPolicyConfigurationProperty{
		TargetValue: jsii.Number(target), ScaleOutCooldown: jsii.Number(scaleOutCooldownS), ScaleInCooldown: jsii.Number(scaleInCooldownS),
		PredefinedMetricSpecification: &awsapplicationautoscaling.CfnScalingPolicy_PredefinedMetricSpecificationProperty{
			PredefinedMetricType: jsii.String("SageMakerVariantInvocationsPerInstance"),
		},
	}, nil)
	if spec.LatencyP99Ms > 0 {
		// ModelLatency is in microseconds; a percentile needs a metric-stat query.
		policy("Latency", "latency-p99", &awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingScalingPolicyConfigurationProperty{
			TargetValue: jsii.Number(spec.LatencyP99Ms * 1000), ScaleOutCooldown: jsii.Number(scaleOutCooldownS), ScaleInCooldown: jsii.Number(scaleInCooldownS),
			CustomizedMetricSpecification: &awsapplicationautoscaling.CfnScalingPolicy_CustomizedMetricSpecificationProperty{
				Metrics: &[]interface{}{&awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingMetricDataQueryProperty{
					Id: jsii.String("p99"), ReturnData: jsii.Bool(true),
					MetricStat: &awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingMetricStatProperty{
						Stat: jsii.String("p99"),
						Metric: &awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingMetricProperty{
							Namespace: jsii.String("AWS/SageMaker"), MetricName: jsii.String("ModelLatency"),
							Dimensions: &[]interface{}{
								&awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingMetricDimensionProperty{Name: jsii.String("EndpointName"), Value: jsii.String(spec.Name)},
								&awsapplicationautoscaling.CfnScalingPolicy_TargetTrackingMetricDimensionProperty{Name: jsii.String("VariantName"), Value: jsii.String(v.Name)},
							},
						},
					},
				}},
			},
		}, nil)
	}
}

// grant lets the providers function describe and steer the allowed endpoints
// for mcp's tools, and the reconciler re-send a lost async request; readers of
// outputs may decrypt what the suite's async endpoints write.
func (es *Endpoints) grant(p *EndpointsProps, async bool) {
	s := p.Settings
	mcp, rec := p.Functions.MCP, p.Reconciler.Function
	// The endpoint operations go in a customer managed policy of their own:
	// each allowed endpoint adds ARNs, and inline policies are capped at
	// 10,240 characters a role.
	var opStmts, mcpStmts []awsiam.PolicyStatement
	if len(p.SageMaker.EndpointArns) > 0 {
		opStmts = append(opStmts,
			allow("DescribeAndSteerEndpoints", []string{"sagemaker:DescribeEndpoint", "sagemaker:UpdateEndpointWeightsAndCapacities"}, p.SageMaker.EndpointArns, nil),
			// Neither call has a resource type in the IAM service authorization reference.
			allow("ReadEndpointScaling", []string{"application-autoscaling:DescribeScalableTargets", "application-autoscaling:DescribeScalingActivities",
				"cloudwatch:GetMetricData"}, []*string{jsii.String("*")}, nil))
		rec.Role.AddToPrincipalPolicy(allow("ResendAsyncRequests", []string{"sagemaker:InvokeEndpointAsync"}, p.SageMaker.EndpointArns, nil))
		rec.Role.AddToPrincipalPolicy(allow("ReadKeptAsyncRequests", []string{"s3:GetObject"}, p.Data.ObjectArns(config.SageMakerInputPrefix), nil))
	}
	if async {
		mcpStmts = append(mcpStmts, allow("DecryptAsyncOutput", []string{"kms:Decrypt"}, []*string{p.SageMaker.Key.KeyArn()}, nil))
		for _, g := range []*GoFunction{rec, p.SageMaker.Events} {
			g.Role.AddToPrincipalPolicy(allow("DecryptAsyncOutput", []string{"kms:Decrypt"}, []*string{p.SageMaker.Key.KeyArn()}, nil))
		}
	}
	if len(opStmts) > 0 {
		pol := awsiam.NewManagedPolicy(es.Scope, jsii.String("ProvidersEndpointOperations"), &awsiam.ManagedPolicyProps{
			Description: jsii.String("mcpbatch providers function: describe_endpoint, shift_traffic, the async cold-start note"),
			Roles:       &[]awsiam.IRole{p.Providers.Function.Role}, Statements: &opStmts,
		})
		suppressWildcards(pol, wildEndpointReads)
	}
	if len(mcpStmts) > 0 {
		// The mcp role's inline policies are near the 10,240-character cap.
		awsiam.NewManagedPolicy(es.Scope, jsii.String("McpEndpointOperations"), &awsiam.ManagedPolicyProps{
			Description: jsii.String("mcpbatch mcp function: read what the suite's async endpoints write"),
			Roles:       &[]awsiam.IRole{mcp.Role}, Statements: &mcpStmts,
		})
	}
	if len(s.SageMakerOperators) > 0 {
		mcp.Function.AddEnvironment(jsii.String(config.EnvSageMakerOperators), jsii.String(strings.Join(s.SageMakerOperators, ",")), nil)
	}
	var timeouts []string
	for _, e := range s.SageMakerDeploy {
		if e.InvocationTimeoutS > 0 {
			timeouts = append(timeouts, e.Name+"="+strconv.Itoa(e.InvocationTimeoutS))
		}
	}
	if len(timeouts) > 0 {
		mcp.Function.AddEnvironment(jsii.String(config.EnvSageMakerInvocationTimeouts), jsii.String(strings.Join(timeouts, ",")), nil)
	}
}

var wildEndpointReads = wildcard{
	pattern: `/^Resource::\*$/`,
	reason: "application-autoscaling:DescribeScalableTargets/DescribeScalingActivities and cloudwatch:GetMetricData " +
		"have no resource type in the IAM service authorization reference (Resource \"*\" only); they read " +
		"scaling limits and metrics, not data.",
}

// overflowSuppressions carries a role's cdk-nag suppressions to the overflow
// policies CDK splits off when the role's inline policies pass IAM's size
// limit (each allowed endpoint adds ARNs to the mcp role). CDK creates them in
// a mutating aspect, after every suppression was recorded; this aspect runs
// between that split and the AwsSolutions checks.
// stack only names the aspect in debugging output; jsii needs a value with state to pass by reference.
type overflowSuppressions struct{ stack string }

// overflowSuppressionsPriority: after CDK's mutating aspects (200), before the
// default priority (500) at which cdk-nag checks.
const overflowSuppressionsPriority = 300

func (*overflowSuppressions) Visit(node constructs.IConstruct) {
	if !strings.HasPrefix(*node.Node().Id(), "OverflowPolicy") {
		return
	}
	role := node.Node().Scope()
	if role == nil {
		return
	}
	src := cfnChild(role.Node().TryFindChild(jsii.String("DefaultPolicy")))
	dst := cfnChild(node)
	if src == nil || dst == nil {
		return
	}
	if md := src.GetMetadata(jsii.String("cdk_nag")); md != nil && dst.GetMetadata(jsii.String("cdk_nag")) == nil {
		dst.AddMetadata(jsii.String("cdk_nag"), md)
	}
}

func cfnChild(c constructs.IConstruct) awscdk.CfnResource {
	if c == nil {
		return nil
	}
	r, _ := c.Node().TryFindChild(jsii.String("Resource")).(awscdk.CfnResource)
	return r
}
