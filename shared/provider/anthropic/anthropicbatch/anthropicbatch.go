// Package anthropicbatch is the Anthropic Message Batches provider as the
// service sees it: the request and result lines and status rules
// (provider/anthropic/wire) here, and the calls that reach Anthropic behind
// the Calls port. It links no SDK. Functions that call Anthropic themselves
// pass the SDK's calls (app/anthropicsdk); the mcp function passes remote
// calls into the providers function (shared/remote), which keeps the SDK
// (about 6 MB, registered at init) out of its bootstrap.
package anthropicbatch

import (
	"context"
	"os"
	"slices"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Calls are the provider's calls that reach Anthropic (through the SDK, or
// through the providers function).
type Calls interface {
	Submit(ctx context.Context, in service.BatchSubmit) (string, error)
	Get(ctx context.Context, ref string) (service.BatchState, error)
	Stop(ctx context.Context, ref string) error
	FindSubmitted(ctx context.Context, in service.BatchSubmit, since time.Time) (service.Found, error)
	CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error)
}

// FetchCalls are Calls that also stream an ended batch's results into object
// storage: the SDK's, in the functions that ingest (the providers function
// does not carry fetches: it may not write output/).
type FetchCalls interface {
	Calls
	FetchResults(ctx context.Context, p job.Part, uri string) error
}

// Provider adapts the Message Batches API to the service's BatchProvider
// port. Requests are written to object storage at submit (one JSONL line
// each) and streamed from there into the create call. It fetches no results:
// the mcp function, which reaches Anthropic through the providers function,
// never ingests.
type Provider struct {
	Calls
	// ModelIDs are the model ids this deployment allows.
	ModelIDs []string
}

// Fetching is the provider of the functions that ingest: results are
// streamed back into object storage (Abilities.FetchResults) and read from
// there like any output file.
type Fetching struct {
	*Provider
	Fetch func(ctx context.Context, p job.Part, uri string) error
}

// WithResults is the provider over calls that fetch results too.
func WithResults(c FetchCalls, modelIDs []string) *Fetching {
	return &Fetching{Provider: &Provider{Calls: c, ModelIDs: modelIDs}, Fetch: c.FetchResults}
}

// FetchResults streams an ended batch's results to uri.
func (f *Fetching) FetchResults(ctx context.Context, p job.Part, uri string) error {
	return f.Fetch(ctx, p, uri)
}

// Abilities are the provider's, and results fetched into object storage.
func (f *Fetching) Abilities() service.Abilities {
	a := f.Provider.Abilities()
	a.FetchResults = f.FetchResults
	return a
}

// ModelIDs are the models a deployment allows: MCPBATCH_ANTHROPIC_MODELS, or the defaults.
func ModelIDs() []string {
	if m := config.List(os.Getenv(config.EnvAnthropicModels)); len(m) > 0 {
		return m
	}
	return config.DefaultAnthropicModels
}

// Name is the provider's name on jobs.
func (a *Provider) Name() string { return job.ProviderAnthropic }

// Models are the allowed model ids.
func (a *Provider) Models() []string { return a.ModelIDs }

// Allows reports whether model is allowed.
func (a *Provider) Allows(model string) bool { return slices.Contains(a.ModelIDs, model) }

// Limits are a Message Batch's documented limits: 100,000 requests and 256 MB,
// no minimum; no job quota, no events (the reconciler polls).
func (a *Provider) Limits() service.BatchLimits {
	return service.BatchLimits{
		Title: "Anthropic Message Batches", MinRecords: wire.MinRecords,
		MaxRecordsPerPart: wire.MaxRequests, MaxBytesPerPart: wire.MaxBytes, EnvelopeBytes: int64(wire.Envelope),
		MediaPath: "anthropic", // the Messages API: images, PDFs and text documents
	}
}

// Abilities: settings checked against the API version, records counted by
// the Token Count API, and a create without an idempotency key whose lost
// outcome is found by listing batches. No quota, no events (the reconciler
// polls), no on-demand runs, no file inputs; results are fetched only by
// Fetching. The calls are read when used: a provider may be declared before
// its calls are set.
func (a *Provider) Abilities() service.Abilities {
	return service.Abilities{
		CheckParams: a.CheckParams,
		CountTokens: func(ctx context.Context, model string, in job.Input, p job.Params) (int64, error) {
			return a.Calls.CountTokens(ctx, model, in, p)
		},
		FindSubmitted: func(ctx context.Context, in service.BatchSubmit, since time.Time) (service.Found, error) {
			return a.Calls.FindSubmitted(ctx, in, since)
		},
	}
}

// Outcome maps a batch's processing_status onto the neutral model.
func (a *Provider) Outcome(status string, cancelRequested bool) (job.ProviderOutcome, bool) {
	return wire.Outcome(status, cancelRequested)
}

// Later orders processing_status values.
func (a *Provider) Later(x, y string) bool { return wire.Later(x, y) }

// Final is what a part becomes once its results are read.
func (a *Provider) Final(p job.Part) job.Status { return wire.Final(p) }

// SubmittedStatus is a new batch's processing_status.
func (a *Provider) SubmittedStatus() string { return wire.StatusInProgress }

// MissingOutputOK: an ended batch always has a results stream.
func (a *Provider) MissingOutputOK(job.Part) bool { return false }

var _ service.BatchProvider = (*Provider)(nil)

// EncodeRecord renders one request line.
func (a *Provider) EncodeRecord(i int, model string, in job.Input, p job.Params) ([]byte, error) {
	return wire.EncodeRecordAt(i, model, in, p)
}

// CheckParams refuses settings the API version this suite sends refuses.
func (a *Provider) CheckParams(model string, p job.Params) error {
	return wire.CheckParams(model, p)
}

// ParseOutputLine parses one results line.
func (a *Provider) ParseOutputLine(line []byte) (job.Record, error) {
	return wire.ParseResultLine(line)
}

// OutputFiles is where FetchResults puts a part's results.
func (a *Provider) OutputFiles(p job.Part) ([]string, string) {
	return []string{p.OutputURI + "results.jsonl"}, ""
}
