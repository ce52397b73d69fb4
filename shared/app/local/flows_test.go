package local_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The end-to-end suite: every flow registered here runs once per wiring
// (wiring_test.go), as TestEndToEnd/<flow>/<wiring>. A flow builds its
// suites with w.options (or newSuiteOn), and TestEndToEnd fails a flow that
// did not build one on the wiring it was given, so no flow runs on only one.

var (
	flowsMu sync.Mutex
	flows   = map[string]func(t *testing.T, w wiring){}
	// builtOn["TestEndToEnd/<flow>/<wiring>"] are the wirings that run's suites used.
	builtOn = map[string]map[string]bool{}
)

// flow registers an end-to-end flow (from a package-level var, so the
// registry is whole before any test runs).
func flow(name string, run func(t *testing.T, w wiring)) bool {
	flowsMu.Lock()
	defer flowsMu.Unlock()
	if _, dup := flows[name]; dup {
		panic("end-to-end flow registered twice: " + name)
	}
	flows[name] = run
	return true
}

// flowRun is the "TestEndToEnd/<flow>/<wiring>" prefix of a test's name ("" outside the suite).
func flowRun(testName string) string {
	parts := strings.SplitN(testName, "/", 4)
	if len(parts) < 3 || parts[0] != "TestEndToEnd" {
		return ""
	}
	return strings.Join(parts[:3], "/")
}

// built records that the test t (or its flow run) built a suite on w.
func built(t *testing.T, w wiring) {
	key := flowRun(t.Name())
	if key == "" {
		return
	}
	flowsMu.Lock()
	defer flowsMu.Unlock()
	if builtOn[key] == nil {
		builtOn[key] = map[string]bool{}
	}
	builtOn[key][w.name] = true
}

// ranOn checks one flow run's record: its suites were built on want and
// on no other wiring.
func ranOn(flowName, want string, got map[string]bool) error {
	var other []string
	for w := range got {
		if w != want {
			other = append(other, w)
		}
	}
	slices.Sort(other)
	switch {
	case len(other) > 0:
		return fmt.Errorf("flow %s, run on wiring %s, built suites on %v: it does not run on the wiring it is given (use w.options / newSuiteOn)", flowName, want, other)
	case !got[want]:
		return fmt.Errorf("flow %s built no suite on wiring %s: it runs on only some wirings", flowName, want)
	}
	return nil
}

func TestEndToEnd(t *testing.T) {
	names := make([]string, 0, len(flows))
	for name := range flows {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, w := range wirings {
				t.Run(w.name, func(t *testing.T) {
					t.Cleanup(func() {
						if t.Skipped() || t.Failed() {
							return
						}
						flowsMu.Lock()
						got := builtOn[t.Name()]
						flowsMu.Unlock()
						if err := ranOn(name, w.name, got); err != nil {
							t.Error(err)
						}
					})
					flows[name](t, w)
				})
			}
		})
	}
}

// issueFlows are the flows issue 32 names, each with the registered flows
// that run it end to end.
var issueFlows = map[string][]string{
	"Bedrock submit → events → output ready → ingest → completed → notifications": {"SubmitToResults", "WebhookDelivery"},
	"Anthropic Message Batches submit to results":                                 {"AnthropicSubmitToResults"},
	"SageMaker async through MCP":                                                 {"SageMakerAsyncThroughMCP"},
	"an on-demand run":                                                            {"OnDemandAndBatchReportsMatch"},
	"deadlines, re-drive and the Flex switch":                                     {"DeadlineRedrive", "DeadlineFlex"},
	"embeddings into an index":                                                    {"EmbedIndexSearch"},
	"retry_failed and the merged latest view":                                     {"ResultsInInputOrder"},
	"webhooks and SNS from a real job":                                            {"WebhookDelivery"},
	"pipeline reports":                                                            {"PipelineEndToEnd"},
	"budgets and held parts":                                                      {"Budget", "BudgetHoldsUnsubmittedParts"},
	"exports and presigned uploads":                                               {"ExportResults", "UploadSubmit"},
	"the reconciler's recovery of a Bedrock job":                                  {"ReconcilerRecoversDroppedBedrockEvent"},
	"account facts":                                                               {"AccountOnlyModelAccepted"},
	"cancel, event order and duplicates":                                          {"Cancel", "EventOrderAndDuplicates"},
	"the chaos soak":                                                              {"ChaosSoak"},
}

// TestEveryFlowOnEveryWiring lists the end-to-end flows and fails when a
// flow the issue names is not registered (so it would run on neither
// wiring's loop), and shows the per-run check catching a flow that runs on
// only one wiring.
func TestEveryFlowOnEveryWiring(t *testing.T) {
	for what, names := range issueFlows {
		for _, n := range names {
			if flows[n] == nil {
				t.Errorf("%s: flow %s is not registered with flow(...)", what, n)
			}
		}
	}
	names := make([]string, 0, len(flows))
	for n := range flows {
		names = append(names, n)
	}
	slices.Sort(names)
	ws := make([]string, len(wirings))
	for i, w := range wirings {
		ws[i] = w.name
	}
	t.Logf("%d end-to-end flows, each on %v: %s", len(names), ws, strings.Join(names, ", "))
	if len(wirings) < 2 || !slices.Contains(ws, sqliteWiring.name) || !slices.Contains(ws, awsWiring.name) {
		t.Errorf("wirings %v: want both sqlite and aws", ws)
	}

	for _, c := range []struct {
		name, want string
		got        map[string]bool
		ok         bool
	}{
		{"ran on its wiring", "aws", map[string]bool{"aws": true}, true},
		{"built on sqlite while run as aws", "aws", map[string]bool{"sqlite": true}, false},
		{"built on both while run as aws", "aws", map[string]bool{"sqlite": true, "aws": true}, false},
		{"built nothing", "sqlite", nil, false},
	} {
		if err := ranOn("F", c.want, c.got); (err == nil) != c.ok {
			t.Errorf("%s: ranOn = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}
