package local_test

import (
	"strings"
	"testing"
)

type endpointView struct {
	EndpointName string `json:"endpoint_name"`
	Status       string `json:"status"`
	Kind         string `json:"kind"`
	Instances    int    `json:"instances"`
	Variants     []struct {
		Name             string  `json:"name"`
		CurrentWeight    float64 `json:"current_weight"`
		TrafficShare     float64 `json:"traffic_share"`
		CurrentInstances int     `json:"current_instances"`
		MinCapacity      *int    `json:"min_capacity"`
		MaxCapacity      *int    `json:"max_capacity"`
		LastScaling      *struct {
			Description string `json:"description"`
			Status      string `json:"status"`
		} `json:"last_scaling"`
	} `json:"variants"`
	Backlog                   *float64 `json:"backlog"`
	HasBacklogWithoutCapacity *bool    `json:"has_backlog_without_capacity"`
}

// TestShiftTrafficOperatorOnly: describe_endpoint shows the 90/10 canary pair;
// shift_traffic is refused for a caller who is not an operator and for
// weights that leave no traffic, and an operator's shift moves the routing.
func TestShiftTrafficOperatorOnly(t *testing.T) {
	t.Setenv("MCPBATCH_SAGEMAKER_OPERATORS", "olga")
	s := newSuite(t)
	ops, bob := s.client("olga"), s.client("bob")

	v := call[endpointView](t, bob, "describe_endpoint", map[string]any{"endpoint_name": "demo-canary"})
	if v.Status != "InService" || v.Kind != "realtime" || len(v.Variants) != 2 || v.Variants[0].TrafficShare != 0.9 ||
		v.Variants[1].Name != "canary" || v.Variants[1].MinCapacity == nil || *v.Variants[1].MaxCapacity != 4 {
		t.Fatalf("describe_endpoint %+v", v)
	}
	shift := map[string]any{"endpoint_name": "demo-canary", "weights": []map[string]any{{"variant": "primary", "weight": 50}, {"variant": "canary", "weight": 50}}}
	if msg := toolErr(t, bob, "shift_traffic", shift); !strings.Contains(msg, "refused") || !strings.Contains(msg, `"bob"`) {
		t.Fatalf("non-operator: %q", msg)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"endpoint_name": "demo-canary", "weights": []map[string]any{{"variant": "primary", "weight": 0}, {"variant": "canary", "weight": 0}}},
			"weights: these weights leave no variant of demo-canary any traffic"},
		{map[string]any{"endpoint_name": "demo-canary", "weights": []map[string]any{{"variant": "ghost", "weight": 1}}}, `weights[0].variant: "ghost" is not a variant of demo-canary; variants: primary, canary`},
		{map[string]any{"endpoint_name": "demo-canary", "weights": []map[string]any{{"variant": "canary", "weight": -1}}}, "weights[0].weight: must be 0 or more"},
		{map[string]any{"endpoint_name": "prod", "weights": []map[string]any{{"variant": "canary", "weight": 1}}}, `endpoint_name: "prod" is not allowed`},
	} {
		if msg := toolErr(t, ops, "shift_traffic", tc.args); !strings.Contains(msg, tc.want) {
			t.Errorf("got %q, want %q", msg, tc.want)
		}
	}
	// The refused calls changed nothing.
	if v := call[endpointView](t, ops, "describe_endpoint", map[string]any{"endpoint_name": "demo-canary"}); v.Variants[0].CurrentWeight != 90 {
		t.Fatalf("weights changed by refused calls: %+v", v.Variants)
	}
	after := call[endpointView](t, ops, "shift_traffic", map[string]any{"endpoint_name": "demo-canary",
		"weights": []map[string]any{{"variant": "primary", "weight": 0}, {"variant": "canary", "weight": 100}}})
	if after.Variants[0].CurrentWeight != 0 || after.Variants[1].TrafficShare != 1 {
		t.Fatalf("after shift %+v", after.Variants)
	}
	for i := 0; i < 20; i++ {
		out := call[struct {
			InvokedVariant string `json:"invoked_variant"`
		}](t, bob, "invoke_endpoint", map[string]any{"endpoint_name": "demo-canary", "body": "x", "content_type": "text/plain"})
		if out.InvokedVariant != "canary" {
			t.Fatalf("after moving all traffic to canary, %q answered", out.InvokedVariant)
		}
	}
}

// TestAsyncScaledToZero: a call to an async endpoint at zero instances says
// the first result waits for an instance to start, and completes once it has;
// describe_endpoint then shows the instance and the scaling activity.
func TestAsyncScaledToZero(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	before := call[endpointView](t, cs, "describe_endpoint", map[string]any{"endpoint_name": "demo-async-zero"})
	if before.Kind != "async" || before.Instances != 0 || *before.Variants[0].MinCapacity != 0 {
		t.Fatalf("before %+v", before)
	}
	h := call[struct {
		JobID    string   `json:"job_id"`
		Warnings []string `json:"warnings"`
	}](t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async-zero", "body": map[string]any{"q": 1}, "content_type": "application/json"})
	if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], "the first result waits for an instance to start") {
		t.Fatalf("warnings %v", h.Warnings)
	}
	if v := waitTerminal(t, s, "alice", h.JobID); v.Status != "completed" || v.Succeeded != 1 {
		t.Fatalf("job %+v", v)
	}
	after := call[endpointView](t, cs, "describe_endpoint", map[string]any{"endpoint_name": "demo-async-zero"})
	if after.Instances != 1 || after.Variants[0].LastScaling == nil || after.Variants[0].LastScaling.Status != "Successful" ||
		after.HasBacklogWithoutCapacity == nil || *after.HasBacklogWithoutCapacity {
		t.Fatalf("after %+v", after)
	}
	// With an instance serving, the next call carries no note.
	h2 := call[struct {
		Warnings []string `json:"warnings"`
	}](t, cs, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async-zero", "body": "x", "content_type": "text/plain"})
	if len(h2.Warnings) != 0 {
		t.Fatalf("warm endpoint warned %v", h2.Warnings)
	}
}
