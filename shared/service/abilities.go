package service

import (
	"context"
	"io"
	"reflect"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// Abilities are what a provider can do beyond the calls every provider
// makes, said in one value: a false or a nil func is an ability the provider
// lacks. A provider declares them (BatchProvider.Abilities); the Registry
// reads them once, and the flows ask the Registry. A wrapper that embeds a
// provider keeps its abilities without naming any.
type Abilities struct {
	// QuotaLimited: the provider counts submitted and running jobs against a
	// per-model quota (Bedrock), so parts queue for room.
	QuotaLimited bool
	// PushesEvents: the provider announces state changes (Bedrock on
	// EventBridge); the reconciler asks it only when an event is overdue.
	// Otherwise the reconciler polls every job in flight.
	PushesEvents bool
	// OnDemand: small jobs of this provider's models may run on demand instead.
	OnDemand bool
	// FileInputs: jobs may come from an uploaded JSONL file.
	FileInputs bool

	// InvocationFor: the provider's jobs each run their records one way of
	// several (Bedrock: Converse or InvokeModel), chosen from the records;
	// all records of a job must agree.
	InvocationFor func(in job.Input) string
	// OutputParser: the provider's output lines are read according to how
	// the part was submitted (job.Part.InvocationType).
	OutputParser func(p job.Part) func(line []byte) (job.Record, error)
	// JobWarnings: the provider's encoding changes records to fit a model's
	// rules (a system prompt the model refuses folded into the first turn),
	// and says how, for the job's warnings. recs may be nil (file inputs:
	// the job-level settings only).
	JobWarnings func(model string, recs []job.Input, p job.Params) []string
	// CheckParams: the provider refuses job-level settings its API refuses
	// for every model (the Anthropic API version), before anything is stored.
	CheckParams func(model string, p job.Params) error
	// CountTokens: the provider counts one record's input tokens exactly, as
	// it bills them (Anthropic's Token Count API).
	CountTokens func(ctx context.Context, model string, in job.Input, p job.Params) (int64, error)
	// FindSubmitted: the provider's create takes no idempotency key
	// (Anthropic Message Batches). After a create whose outcome is unknown
	// (an error after the send, a process killed before the Ref was written)
	// the service asks it for the job that create may have made before
	// creating another: it lists the provider jobs created since the given
	// time (less the provider's clock skew) that may be the one a create of
	// in made, those proved in's by a mark only in's create carries, read
	// on the job itself, and those that cannot be told apart yet. Jobs
	// proved someone else's are left out. The service drops those a part
	// already holds (store.RefOwner) and decides.
	FindSubmitted func(ctx context.Context, in BatchSubmit, since time.Time) (Found, error)
	// FindNamed: the provider's create names the provider job after the part
	// and the provider looks a job up by that name (Bedrock), so a create
	// whose outcome was lost is found, and proved the part's, by its name.
	// "" when there is none.
	FindNamed func(ctx context.Context, name string) (string, error)
	// FetchResults: the provider's results are not in object storage when
	// the batch ends (Anthropic streams them over HTTP); it copies them to
	// uri so ingest reads them with checkpoints like any other output file.
	FetchResults func(ctx context.Context, part job.Part, uri string) error
	// ManifestTokens: the provider writes a summary beside its output with
	// the job's token totals (Bedrock's manifest.json.out); this reads them.
	ManifestTokens func(r io.Reader) (input, output int64, err error)
}

// Finds reports whether a create of this provider whose outcome was lost can
// be looked for (by name or by listing).
func (a Abilities) Finds() bool { return a.FindSubmitted != nil || a.FindNamed != nil }

// Has names the abilities a provider has (the fields set), in field order:
// what a wrapper must keep, and what a log or a test compares.
func (a Abilities) Has() []string {
	v := reflect.ValueOf(a)
	var out []string
	for i := range v.NumField() {
		if !v.Field(i).IsZero() {
			out = append(out, v.Type().Field(i).Name)
		}
	}
	return out
}
