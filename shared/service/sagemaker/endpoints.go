package sagemaker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// EndpointControl reads and steers an endpoint: the SageMaker control plane,
// Application Auto Scaling and CloudWatch (provider/sagemaker implements it).
type EndpointControl interface {
	DescribeEndpoint(ctx context.Context, name string) (EndpointState, error)
	UpdateWeights(ctx context.Context, name string, weights []VariantWeight) error
}

// EndpointState is what describe_endpoint shows.
type EndpointState struct {
	Name          string
	Status        string
	FailureReason string
	Async         bool
	LastModified  time.Time
	Variants      []VariantState
	// Backlog and HasBacklogWithoutCapacity are the async queue metrics, nil when
	// CloudWatch has no recent datapoint (or the endpoint is real-time).
	Backlog                   *float64
	HasBacklogWithoutCapacity *bool
}

// VariantState is one production variant with its scaling limits.
type VariantState struct {
	Name                               string
	CurrentWeight, DesiredWeight       float64
	CurrentInstances, DesiredInstances int
	InstanceType                       string
	Scaling                            *ScalingLimits // nil: no scalable target
	LastActivity                       *ScalingActivity
}

// ScalingLimits are a variant's Application Auto Scaling target.
type ScalingLimits struct{ Min, Max int }

// ScalingActivity is Application Auto Scaling's latest action on a variant.
type ScalingActivity struct {
	Description, Cause, Status string
	Start, End                 time.Time
}

// VariantWeight is one variant's new weight.
type VariantWeight struct {
	Variant string
	Weight  float64
}

// Instances is the endpoint's current instance count over all variants.
func (e EndpointState) Instances() int {
	n := 0
	for _, v := range e.Variants {
		n += v.CurrentInstances
	}
	return n
}

// RefusedError is an operation the caller may not run; the text says who may.
type RefusedError struct{ Msg string }

func (e *RefusedError) Error() string { return e.Msg }

// ErrNoControl: this deployment has no SageMaker control-plane client.
var ErrNoControl = errors.New("this deployment has no SageMaker control-plane client")

// ShiftRequest is shift_traffic as a user sends it.
type ShiftRequest struct {
	Owner    string
	Endpoint string
	Weights  []VariantWeight
}

// DescribeEndpoint shows an allowed endpoint's status, variants and scaling.
func (m *Service) DescribeEndpoint(ctx context.Context, owner, name string) (EndpointState, error) {
	if err := m.checkEndpoint(name); err != nil {
		return EndpointState{}, err
	}
	if m.Control == nil {
		return EndpointState{}, ErrNoControl
	}
	st, err := m.Control.DescribeEndpoint(ctx, name)
	if err != nil {
		return EndpointState{}, fmt.Errorf("describe endpoint %s: %w", name, err)
	}
	return st, nil
}

// ShiftTraffic sets variant weights with UpdateEndpointWeightsAndCapacities.
// Only an operator named in the deployment's settings may; a weight set that
// leaves no variant any traffic is refused before SageMaker is called.
func (m *Service) ShiftTraffic(ctx context.Context, req ShiftRequest) (EndpointState, error) {
	if err := m.checkEndpoint(req.Endpoint); err != nil {
		return EndpointState{}, err
	}
	if !slices.Contains(m.Operators, req.Owner) {
		return EndpointState{}, &RefusedError{Msg: fmt.Sprintf("shift_traffic: refused: only this deployment's operators may change endpoint weights "+
			"(you are %q; an operator is added with -c sagemakerOperators=<owner>)", req.Owner)}
	}
	if len(req.Weights) == 0 {
		return EndpointState{}, job.Fieldf("weights", "required: at least one {variant, weight}")
	}
	if m.Control == nil {
		return EndpointState{}, ErrNoControl
	}
	cur, err := m.Control.DescribeEndpoint(ctx, req.Endpoint)
	if err != nil {
		return EndpointState{}, fmt.Errorf("describe endpoint %s: %w", req.Endpoint, err)
	}
	after := map[string]float64{}
	var names []string
	for _, v := range cur.Variants {
		after[v.Name] = v.CurrentWeight
		names = append(names, v.Name)
	}
	seen := map[string]bool{}
	for i, w := range req.Weights {
		field := fmt.Sprintf("weights[%d]", i)
		if _, ok := after[w.Variant]; !ok {
			return EndpointState{}, job.Fieldf(field+".variant", "%q is not a variant of %s; variants: %s", w.Variant, req.Endpoint, strings.Join(names, ", "))
		}
		if seen[w.Variant] {
			return EndpointState{}, job.Fieldf(field+".variant", "%q is given twice", w.Variant)
		}
		seen[w.Variant] = true
		if w.Weight < 0 || math.IsNaN(w.Weight) || math.IsInf(w.Weight, 0) {
			return EndpointState{}, job.Fieldf(field+".weight", "must be 0 or more (got %v)", w.Weight)
		}
		after[w.Variant] = w.Weight
	}
	total := 0.0
	for _, w := range after {
		total += w
	}
	if total <= 0 {
		return EndpointState{}, job.Fieldf("weights", "these weights leave no variant of %s any traffic; give at least one variant a weight above 0", req.Endpoint)
	}
	if cur.Status != "InService" {
		return EndpointState{}, job.Fieldf("endpoint_name", "%s is %s; SageMaker changes weights only on an endpoint InService, try again once it is", req.Endpoint, cur.Status)
	}
	if err := m.Control.UpdateWeights(ctx, req.Endpoint, req.Weights); err != nil {
		return EndpointState{}, fmt.Errorf("update weights of %s: %w", req.Endpoint, err)
	}
	service.Logger(m.Log).InfoContext(ctx, "endpoint weights shifted", "endpoint", req.Endpoint, "owner", req.Owner, "weights", after)
	st, err := m.Control.DescribeEndpoint(ctx, req.Endpoint)
	if err != nil {
		return EndpointState{}, fmt.Errorf("describe endpoint %s after the update: %w", req.Endpoint, err)
	}
	return st, nil
}

// coldStartNote is said when an async request reaches an endpoint at zero
// instances: the result waits for the first instance to start.
func (m *Service) coldStartNote(ctx context.Context, endpoint string) string {
	if m.Control == nil {
		return ""
	}
	st, err := m.Control.DescribeEndpoint(ctx, endpoint)
	if err != nil {
		// The note is advice; the request is queued either way.
		service.Logger(m.Log).WarnContext(ctx, "describe endpoint for the cold-start note", "endpoint", endpoint, "error", err)
		return ""
	}
	if !st.Async || st.Instances() > 0 {
		return ""
	}
	return fmt.Sprintf("endpoint %s has scaled to zero instances: the first result waits for an instance to start "+
		"(usually several minutes); later requests run as soon as it serves", endpoint)
}
