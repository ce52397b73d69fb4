package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
)

// DescribeEndpointIn is the input of describe_endpoint.
type DescribeEndpointIn struct {
	EndpointName string `json:"endpoint_name" jsonschema:"SageMaker endpoint name from the allowed list"`
}

// EndpointView is what describe_endpoint and shift_traffic return.
type EndpointView struct {
	EndpointName  string        `json:"endpoint_name"`
	Status        string        `json:"status" jsonschema:"SageMaker's EndpointStatus: InService, Updating, Creating, Failed..."`
	FailureReason string        `json:"failure_reason,omitempty"`
	Kind          string        `json:"kind" jsonschema:"async or realtime"`
	Instances     int           `json:"instances" jsonschema:"current instances over all variants"`
	Variants      []VariantView `json:"variants"`
	// Backlog and HasBacklogWithoutCapacity come from CloudWatch (async endpoints only).
	Backlog                   *float64 `json:"backlog,omitempty" jsonschema:"ApproximateBacklogSize: queued async requests (latest datapoint)"`
	HasBacklogWithoutCapacity *bool    `json:"has_backlog_without_capacity,omitempty" jsonschema:"requests wait and no instance runs: the first one is starting"`
	LastModified              string   `json:"last_modified,omitempty"`
}

// VariantView is one production variant.
type VariantView struct {
	Name             string       `json:"name"`
	CurrentWeight    float64      `json:"current_weight"`
	DesiredWeight    float64      `json:"desired_weight"`
	TrafficShare     float64      `json:"traffic_share" jsonschema:"this variant's share of the current weights, 0..1"`
	CurrentInstances int          `json:"current_instances"`
	DesiredInstances int          `json:"desired_instances"`
	MinCapacity      *int         `json:"min_capacity,omitempty" jsonschema:"Application Auto Scaling limits (absent: not scaled)"`
	MaxCapacity      *int         `json:"max_capacity,omitempty"`
	LastScaling      *ScalingView `json:"last_scaling,omitempty"`
}

// ScalingView is the latest scaling activity of a variant.
type ScalingView struct {
	Description string `json:"description"`
	Cause       string `json:"cause,omitempty"`
	Status      string `json:"status"`
	StartedAt   string `json:"started_at,omitempty"`
	EndedAt     string `json:"ended_at,omitempty"`
}

// ShiftTrafficIn is the input of shift_traffic.
type ShiftTrafficIn struct {
	EndpointName string          `json:"endpoint_name" jsonschema:"SageMaker endpoint name from the allowed list"`
	Weights      []VariantWeight `json:"weights" jsonschema:"new weights; variants not named keep theirs; at least one variant must keep a weight above 0"`
}

// VariantWeight is one variant's new weight.
type VariantWeight struct {
	Variant string  `json:"variant"`
	Weight  float64 `json:"weight" jsonschema:"relative weight, 0 or more (e.g. 90 and 10)"`
}

// addEndpointTools registers describe_endpoint and shift_traffic.
func (s *Server) addEndpointTools(srv *mcp.Server) {
	yes, no := true, false
	addTool(srv, &mcp.Tool{
		Name:  "describe_endpoint",
		Title: "Describe a SageMaker endpoint",
		Description: "Show an allowed SageMaker endpoint: status, production variants with weights and instance counts, " +
			"scaling limits and the latest scaling activity, and for an async endpoint its backlog.",
		Annotations: &mcp.ToolAnnotations{Title: "Describe endpoint", ReadOnlyHint: true, OpenWorldHint: &yes},
	}, s.describeEndpoint)
	addTool(srv, &mcp.Tool{
		Name:  "shift_traffic",
		Title: "Shift traffic between SageMaker variants",
		Description: "Set production-variant weights of an allowed endpoint (UpdateEndpointWeightsAndCapacities), e.g. move a canary " +
			"from 10% to 50%. Operators only; a set of weights that leaves no variant any traffic is refused.",
		Annotations: &mcp.ToolAnnotations{Title: "Shift traffic", DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &yes},
	}, s.shiftTraffic)
}

func (s *Server) describeEndpoint(ctx context.Context, req *mcp.CallToolRequest, in DescribeEndpointIn) (*mcp.CallToolResult, EndpointView, error) {
	return call(s, ctx, req, "describe_endpoint", "", func(owner string) (EndpointView, string, string, error) {
		st, err := s.SageMaker.DescribeEndpoint(ctx, owner, in.EndpointName)
		if err != nil {
			return EndpointView{}, "", "", err
		}
		v := endpointView(st)
		return v, endpointSummary(v), "", nil
	})
}

func (s *Server) shiftTraffic(ctx context.Context, req *mcp.CallToolRequest, in ShiftTrafficIn) (*mcp.CallToolResult, EndpointView, error) {
	return call(s, ctx, req, "shift_traffic", "", func(owner string) (EndpointView, string, string, error) {
		r := smsvc.ShiftRequest{Owner: owner, Endpoint: in.EndpointName}
		for _, w := range in.Weights {
			r.Weights = append(r.Weights, smsvc.VariantWeight{Variant: w.Variant, Weight: w.Weight})
		}
		st, err := s.SageMaker.ShiftTraffic(ctx, r)
		if err != nil {
			return EndpointView{}, "", "", err
		}
		v := endpointView(st)
		return v, "Weights updated. " + endpointSummary(v), "", nil
	})
}

func endpointView(st smsvc.EndpointState) EndpointView {
	v := EndpointView{EndpointName: st.Name, Status: st.Status, FailureReason: st.FailureReason, Kind: "realtime",
		Instances: st.Instances(), Variants: make([]VariantView, 0, len(st.Variants)), Backlog: st.Backlog, HasBacklogWithoutCapacity: st.HasBacklogWithoutCapacity, LastModified: ts(st.LastModified)}
	if st.Async {
		v.Kind = "async"
	}
	total := 0.0
	for _, x := range st.Variants {
		total += x.CurrentWeight
	}
	for _, x := range st.Variants {
		vv := VariantView{Name: x.Name, CurrentWeight: x.CurrentWeight, DesiredWeight: x.DesiredWeight,
			CurrentInstances: x.CurrentInstances, DesiredInstances: x.DesiredInstances}
		if total > 0 {
			vv.TrafficShare = x.CurrentWeight / total
		}
		if x.Scaling != nil {
			lo, hi := x.Scaling.Min, x.Scaling.Max
			vv.MinCapacity, vv.MaxCapacity = &lo, &hi
		}
		if a := x.LastActivity; a != nil {
			vv.LastScaling = &ScalingView{Description: a.Description, Cause: a.Cause, Status: a.Status, StartedAt: ts(a.Start), EndedAt: ts(a.End)}
		}
		v.Variants = append(v.Variants, vv)
	}
	return v
}

func endpointSummary(v EndpointView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Endpoint %s (%s) is %s with %d instance(s):", v.EndpointName, v.Kind, v.Status, v.Instances)
	for _, x := range v.Variants {
		fmt.Fprintf(&b, " %s weight %g (%.0f%%), %d instance(s)", x.Name, x.CurrentWeight, 100*x.TrafficShare, x.CurrentInstances)
		if x.MinCapacity != nil {
			fmt.Fprintf(&b, ", scales %d..%d", *x.MinCapacity, *x.MaxCapacity)
		}
		b.WriteString(";")
	}
	if v.Backlog != nil {
		fmt.Fprintf(&b, " backlog %g", *v.Backlog)
	}
	if v.HasBacklogWithoutCapacity != nil && *v.HasBacklogWithoutCapacity {
		b.WriteString("; requests are waiting for the first instance to start")
	}
	return strings.TrimSuffix(b.String(), ";") + "."
}
