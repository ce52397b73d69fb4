// Package service holds what the use cases share: the ports (the
// batch-provider port every provider implements, with its Abilities; object
// storage, the bus), the registry of providers by name, the split of a job
// into provider jobs, the vocabulary of results pages and the folding of part
// statuses into a job status. The flows live in sub-packages, each struct
// naming what it uses (narrow ports declared where used): batch (submit,
// cancel, provider events, ingest), ondemand, query (get, list, results),
// retry, sagemaker, transfer (uploads, file submits, exports) and reconcile;
// graph wires them.
// Nothing here imports an AWS SDK or a provider package; shared/app passes
// the adapters in.
package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// BatchSubmit asks a batch provider to start one provider job.
type BatchSubmit struct {
	Name        string // provider job name, also the idempotency token
	Model       string
	InputURI    string
	OutputURI   string
	Tags        map[string]string
	TimeoutHrs  int
	ClientToken string
	// Records is how many records the provider job holds (a marker Find
	// matches on for providers whose jobs carry no name).
	Records int
	// InvocationType is the part's (job.Part.InvocationType).
	InvocationType string
	// BetaHeaders are provider beta flags the job needs (the catalog's
	// batch_max_output.beta_header when max_tokens is above the model's
	// normal maximum); providers without betas ignore them.
	BetaHeaders []string
}

// Found is what a provider's FindSubmitted found (see Abilities). A job in Unproven is never adopted and
// never stopped: it may be another system's, in the same provider account.
type Found struct {
	Ours     []string `json:"ours,omitempty"`
	Unproven []string `json:"unproven,omitempty"`
}

// ErrSubmitUnknown marks a failed create that may still have made the job (a
// server error after the send, a lost answer): the provider's FindSubmitted is asked.
var ErrSubmitUnknown = errors.New("the provider may have made the job")

// ErrSubmitInFlight marks a create that may still be running where it was
// sent (the hop to the function that makes it broke, and that function goes
// on): not finding the job at once proves nothing, so the part keeps its
// lease and is looked for again once the lease runs out.
var ErrSubmitInFlight = errors.New("the provider job's create may still be running")

// ErrSubmitUnproven: provider jobs no part holds may be a part's, and cannot
// be told apart from other systems' yet (see Found).
var ErrSubmitUnproven = errors.New("provider jobs that may be this part's cannot be proved ours yet")

// BatchState is a provider's view of one provider job.
type BatchState struct {
	Ref     string
	Name    string
	Status  string // the provider's own word
	Message string
}

// BatchProvider is the port every batch inference provider implements (Bedrock
// batch inference and Anthropic Message Batches today). Everything that differs
// between providers is asked of it: the service holds a registry of them by
// Name and never branches on a provider's name.
type BatchProvider interface {
	// Name is the provider's name on jobs (job.Provider) and in the registry.
	Name() string
	// Models are the model ids this deployment allows on the provider; Allows
	// reports whether model is one of them.
	Models() []string
	Allows(model string) bool
	// Limits are the provider's split rules and limits.
	Limits() BatchLimits
	// Abilities are what the provider can do beyond the calls below.
	Abilities() Abilities

	Submit(ctx context.Context, in BatchSubmit) (ref string, err error)
	Get(ctx context.Context, ref string) (BatchState, error)
	Stop(ctx context.Context, ref string) error
	// EncodeRecord renders input record i as one line in the provider's native
	// format; a *job.FieldError names records[i].<field>.
	EncodeRecord(i int, model string, in job.Input, p job.Params) ([]byte, error)
	// ParseOutputLine turns one output line into a record; an error is a bad line.
	ParseOutputLine(line []byte) (job.Record, error)
	// OutputFiles lists where a finished provider job put its result lines.
	OutputFiles(part job.Part) (files []string, manifest string)

	// Outcome maps the provider's own status word onto the neutral model;
	// cancelRequested is for providers whose end state does not say whether the
	// job was cancelled. false: a word the provider does not know.
	Outcome(providerStatus string, cancelRequested bool) (job.ProviderOutcome, bool)
	// Later reports whether status b comes after a within one neutral status
	// (Bedrock's Scheduled after Validating); "" comes before everything.
	Later(a, b string) bool
	// Final is what a part becomes once its output is read, from the status the
	// provider ended it with; "" when the provider never ended it.
	Final(p job.Part) job.Status
	// SubmittedStatus is the provider's word for a job it has just accepted.
	SubmittedStatus() string
	// MissingOutputOK reports whether an ended part may have written no output
	// (stopped or expired before any record ran).
	MissingOutputOK(p job.Part) bool
}

// BatchLimits are a provider's split rules and limits.
type BatchLimits struct {
	// Title names the provider in messages ("Bedrock batch inference").
	Title string
	// MinRecords is the fewest records a provider job may hold.
	MinRecords int
	// MaxRecordsPerPart and MaxBytesPerPart bound one provider job; bigger jobs
	// are split (see Split).
	MaxRecordsPerPart int
	MaxBytesPerPart   int64
	// EnvelopeBytes is what a provider job's body adds around its lines.
	EnvelopeBytes int64
	// MediaPath is the shared/content path (wire shape and documented limits)
	// a record's images and documents take in this provider's batch bodies
	// ("bedrock-converse", "anthropic"); empty: batch jobs of this provider
	// carry text only.
	MediaPath string
}

// Blobs is the object storage the service uses.
type Blobs interface {
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
}

// Publisher sends events to the project bus.
type Publisher interface {
	Publish(ctx context.Context, detailType string, detail any) error
}

var _ Blobs = blob.Store(nil)

// Clock is injectable for tests.
type Clock func() time.Time

// Now is the clock's time in UTC (the system's for a nil clock).
func (c Clock) Now() time.Time {
	if c != nil {
		return c().UTC()
	}
	return time.Now().UTC()
}

// Logger is l, or the default logger for a nil one (a flow built without one).
func Logger(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}
