// Package routes is the suite's one table of event routes: which function
// takes which events. The stack builds its EventBridge rules from it
// (infra), make dev its event router (shared/app/local); a test on each side
// holds it to the table. It imports only config, so the CDK app links no
// more of the suite than the facts it deploys.
package routes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// The functions events are routed to (functions/<name>, the Lambda's name
// in the stack).
const (
	FnBedrockEvents = "bedrock-events"
	FnIngest        = "ingest"
	FnValidate      = "validate"
	FnOnDemand      = "ondemand"
	FnNightlyReport = "nightly-report"
)

// Route is one rule: events of Source with one of DetailTypes go to Function.
type Route struct {
	Function    string
	Source      string
	DetailTypes []string
	// Rule is the rule's construct id in the stack (kept: a new id replaces the rule).
	Rule string
	// DefaultBus: the events arrive on the account's default bus, where AWS
	// services publish (the rule takes this account's only); else the project bus.
	DefaultBus bool
	// JobNameField is the detail member naming the provider job, which the
	// rule matches by the deployment's job prefix, so other stacks' and other
	// tools' jobs stay out ("": none).
	JobNameField string
}

// Table is every route. Job Completed has one consumer, nightly-report,
// which also delivers the notifications jobs asked for.
var Table = []Route{
	{Function: FnBedrockEvents, Source: config.BedrockEventSource, DetailTypes: []string{config.BedrockDetailType},
		Rule: "BedrockJobStateChange", DefaultBus: true, JobNameField: "batchJobName"},
	{Function: FnIngest, Source: config.EventSource, DetailTypes: []string{config.DetailJobOutputReady}, Rule: "JobOutputReady"},
	{Function: FnValidate, Source: config.EventSource, DetailTypes: []string{config.DetailInputValidation}, Rule: "InputValidationRequested"},
	{Function: FnOnDemand, Source: config.EventSource, DetailTypes: []string{config.DetailOnDemandRun}, Rule: "OnDemandRunRequested"},
	{Function: FnNightlyReport, Source: config.EventSource, DetailTypes: []string{config.DetailJobCompleted, config.DetailPipelineTick}, Rule: "PipelineEvents"},
}

// Of is fn's route; a function the table does not route is a programming error.
func Of(fn string) Route {
	for _, r := range Table {
		if r.Function == fn {
			return r
		}
	}
	panic("routes: no route for function " + fn)
}

// Description is the rule's description: what it routes where.
func (r Route) Description() string {
	return strings.Join(r.DetailTypes, ", ") + " -> " + r.Function
}

// Key is how a router keys an event: "source|detail-type".
func Key(source, detailType string) string { return source + "|" + detailType }

// FunctionFor is the function an event runs ("" when none takes it).
func FunctionFor(source, detailType string) string {
	for _, r := range Table {
		if r.Source == source && slices.Contains(r.DetailTypes, detailType) {
			return r.Function
		}
	}
	return ""
}

// Handler handles one EventBridge event.
type Handler = func(context.Context, events.CloudWatchEvent) error

// Events keys each routed event to the handler of its function. Every
// function of the table needs one, and no other may be given.
func Events(handlers map[string]Handler) (map[string]Handler, error) {
	out := map[string]Handler{}
	seen := map[string]bool{}
	for _, r := range Table {
		h, ok := handlers[r.Function]
		if !ok || h == nil {
			return nil, fmt.Errorf("routes: no handler for function %s (%s)", r.Function, r.Description())
		}
		seen[r.Function] = true
		for _, dt := range r.DetailTypes {
			out[Key(r.Source, dt)] = h
		}
	}
	for _, fn := range slices.Sorted(maps.Keys(handlers)) {
		if !seen[fn] {
			return nil, fmt.Errorf("routes: a handler for %s, which the table routes nothing to", fn)
		}
	}
	return out, nil
}
