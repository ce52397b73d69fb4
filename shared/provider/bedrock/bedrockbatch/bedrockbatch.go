// Package bedrockbatch adapts the Bedrock batch inference client
// (provider/bedrock) to the service's BatchProvider port.
package bedrockbatch

import (
	"context"
	"errors"
	"io"
	"path"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Provider adapts the Bedrock client to the service's BatchProvider port.
type Provider struct {
	Client  *bedrock.Client
	RoleARN string
	// ModelIDs are the model ids this deployment allows.
	ModelIDs []string
}

// Name is the provider's name on jobs.
func (b *Provider) Name() string { return job.ProviderBedrock }

// Models are the allowed model ids.
func (b *Provider) Models() []string { return b.ModelIDs }

// Allows reports whether model is allowed.
func (b *Provider) Allows(model string) bool { return slices.Contains(b.ModelIDs, model) }

// Limits are Bedrock batch inference's documented quotas per job and file
// (https://docs.aws.amazon.com/bedrock/latest/userguide/quotas.html): 100..50,000
// records and 1 GB per input file, jobs counted against a per-model quota.
func (b *Provider) Limits() service.BatchLimits {
	return service.BatchLimits{
		Title: "Bedrock batch inference", MinRecords: job.BedrockMinRecords,
		MaxRecordsPerPart: job.BedrockMaxRecords, MaxBytesPerPart: job.BedrockMaxFileBytes,
		MediaPath: "bedrock-converse", // Converse-type jobs: images and documents for every model that reads them
	}
}

// Abilities: jobs counted against a per-model quota, state changes pushed on
// EventBridge, small jobs on demand, file inputs; records run as Converse or
// InvokeModel jobs, output read by the part's type; a create named after the
// part (found by that name when its outcome is lost) and a manifest of the
// job's token totals.
func (b *Provider) Abilities() service.Abilities {
	return service.Abilities{
		QuotaLimited: true, PushesEvents: true, OnDemand: true, FileInputs: true,
		InvocationFor: b.InvocationFor, OutputParser: b.OutputParser, JobWarnings: b.JobWarnings,
		FindNamed: b.FindNamed, ManifestTokens: b.ManifestTokens,
	}
}

// Outcome maps one of Bedrock's ten statuses onto the neutral model.
func (b *Provider) Outcome(status string, _ bool) (job.ProviderOutcome, bool) {
	return bedrock.Outcome(status)
}

// Later orders Bedrock's statuses within a neutral status.
func (b *Provider) Later(x, y string) bool { return bedrock.Later(x, y) }

// Final is what a part becomes after ingest, from the status Bedrock ended it with.
func (b *Provider) Final(p job.Part) job.Status { return bedrock.Final(p.ProviderStatus) }

// SubmittedStatus is Bedrock's word for a job it accepted.
func (b *Provider) SubmittedStatus() string { return bedrock.StatusSubmitted }

// MissingOutputOK: a stopped or expired job may have written nothing.
func (b *Provider) MissingOutputOK(p job.Part) bool {
	return bedrock.MayLackOutput(p.ProviderStatus)
}

var _ service.BatchProvider = (*Provider)(nil)

// Submit starts one Bedrock batch job.
func (b *Provider) Submit(ctx context.Context, in service.BatchSubmit) (string, error) {
	arn, err := b.Client.Submit(ctx, bedrock.SubmitInput{
		JobName: in.Name, ClientRequestToken: in.ClientToken, ModelID: in.Model, RoleARN: b.RoleARN,
		InputURI: in.InputURI, OutputURI: in.OutputURI, TimeoutHours: in.TimeoutHrs, Tags: in.Tags,
		InvocationType: in.InvocationType,
	})
	switch {
	case errors.Is(err, bedrock.ErrQuotaExceeded):
		return "", errors.Join(service.ErrQuotaFull, err)
	case errors.Is(err, bedrock.ErrThrottled):
		// Throttled past the SDK's retries: Bedrock made no job (and the
		// client token makes a later create idempotent anyway); the part
		// stays queued for the reconciler instead of failing the job.
		return "", errors.Join(service.ErrProviderBusy, err)
	}
	return arn, err
}

// Get reads a Bedrock job's state.
func (b *Provider) Get(ctx context.Context, ref string) (service.BatchState, error) {
	info, err := b.Client.Get(ctx, ref)
	if err != nil {
		return service.BatchState{}, err
	}
	return service.BatchState{Ref: info.ARN, Name: info.Name, Status: info.Status, Message: info.Message}, nil
}

// FindNamed finds the Bedrock job a create of the part named name made: the
// create gives the job that name, and the name carries the job's ULID, so a
// job of it is the part's. "" when there is none.
func (b *Provider) FindNamed(ctx context.Context, name string) (string, error) {
	info, err := b.Client.Get(ctx, name)
	if errors.Is(err, bedrock.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return info.ARN, nil
}

// Stop stops a Bedrock job.
func (b *Provider) Stop(ctx context.Context, ref string) error { return b.Client.Stop(ctx, ref) }

// EncodeRecord renders one input line in the model's native format.
func (b *Provider) EncodeRecord(i int, model string, in job.Input, p job.Params) ([]byte, error) {
	return bedrock.EncodeRecordAt(i, model, in, p)
}

// ParseOutputLine parses one output line of an InvokeModel job (parts
// stored before Converse jobs); OutputParser picks by the part.
func (b *Provider) ParseOutputLine(line []byte) (job.Record, error) {
	return bedrock.ParseOutputLine(line)
}

// InvocationFor is the job type a record needs: Converse for prompts and
// messages, InvokeModel for embeddings and native model_input bodies.
func (b *Provider) InvocationFor(in job.Input) string { return bedrock.InvocationFor(in) }

// OutputParser reads a part's output by the invocation type it was
// submitted with ("" for parts stored before: InvokeModel).
func (b *Provider) OutputParser(p job.Part) func([]byte) (job.Record, error) {
	return bedrock.OutputParser(p.InvocationType)
}

// JobWarnings says how records are changed to fit the model (a system
// prompt folded into the first user turn).
func (b *Provider) JobWarnings(modelID string, recs []job.Input, p job.Params) []string {
	rules, _ := model.Default().Lookup(modelID)
	return bedrock.JobWarnings(modelID, rules, recs, p)
}

// OutputFiles is where Bedrock writes a part's results: <output>/<job id>/<input name>.out.
func (b *Provider) OutputFiles(p job.Part) ([]string, string) {
	prefix := bedrock.OutputPrefix(p.OutputURI, p.Ref)
	return []string{blob.Join(prefix, path.Base(p.InputURI)+".out")}, blob.Join(prefix, "manifest.json.out")
}

// ManifestTokens reads the token totals of manifest.json.out, for families
// whose output lines carry none.
func (b *Provider) ManifestTokens(r io.Reader) (int64, int64, error) {
	m, err := bedrock.ParseManifest(r)
	return m.InputTokenCount, m.OutputTokenCount, err
}
