// Package anthropicapp wires the Anthropic Message Batches provider. It lives
// apart from package app so only the functions that call Anthropic (mcp, ingest,
// reconciler) link the SDK.
package anthropicapp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// ObjectStore is what the Anthropic adapter needs of object storage.
type ObjectStore interface {
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
}

// AnthropicProvider adapts the Message Batches client to the service's
// BatchProvider port. Requests are written to object storage at submit (one
// JSONL line each) and streamed from there into the create call; results are
// streamed back into object storage for ingest.
type AnthropicProvider struct {
	Client *anthropic.Client
	Blobs  ObjectStore
	// ModelIDs are the model ids this deployment allows.
	ModelIDs []string
}

// Name is the provider's name on jobs.
func (a *AnthropicProvider) Name() string { return job.ProviderAnthropic }

// Models are the allowed model ids.
func (a *AnthropicProvider) Models() []string { return a.ModelIDs }

// Allows reports whether model is allowed.
func (a *AnthropicProvider) Allows(model string) bool { return slices.Contains(a.ModelIDs, model) }

// Limits are a Message Batch's documented limits: 100,000 requests and 256 MB,
// no minimum; no job quota, no events (the reconciler polls).
func (a *AnthropicProvider) Limits() service.BatchLimits {
	return service.BatchLimits{
		Title: "Anthropic Message Batches", MinRecords: anthropic.MinRecords,
		MaxRecordsPerPart: anthropic.MaxRequests, MaxBytesPerPart: anthropic.MaxBytes, EnvelopeBytes: int64(anthropic.Envelope),
		MediaPath: "anthropic", // the Messages API: images, PDFs and text documents
	}
}

// Outcome maps a batch's processing_status onto the neutral model.
func (a *AnthropicProvider) Outcome(status string, cancelRequested bool) (job.ProviderOutcome, bool) {
	return anthropic.Outcome(status, cancelRequested)
}

// Later orders processing_status values.
func (a *AnthropicProvider) Later(x, y string) bool { return anthropic.Later(x, y) }

// Final is what a part becomes once its results are read.
func (a *AnthropicProvider) Final(p job.Part) job.Status { return anthropic.Final(p) }

// SubmittedStatus is a new batch's processing_status.
func (a *AnthropicProvider) SubmittedStatus() string { return anthropic.StatusInProgress }

// MissingOutputOK: an ended batch always has a results stream.
func (a *AnthropicProvider) MissingOutputOK(job.Part) bool { return false }

var (
	_ service.BatchProvider = (*AnthropicProvider)(nil)
	_ service.ResultFetcher = (*AnthropicProvider)(nil)
	_ service.BatchFinder   = (*AnthropicProvider)(nil)
	_ batch.TokenCounter    = (*AnthropicProvider)(nil)
)

// findPageSize is the list page FindSubmitted reads (the API allows 1..1000).
const findPageSize = 100

// findSkew is how much earlier than our first try a batch FindSubmitted
// considers may have been created (clock skew between us and Anthropic, and a
// first try recorded after the call went out).
const findSkew = 2 * time.Hour

// FindSubmitted lists the batches a create with an unknown outcome may have
// made. Message Batches carry no name or metadata, and their requests are not
// readable until they end, so the marker is what a listing shows: a batch
// created since the first try holding exactly in.Records requests. Other
// jobs' batches of the same size match too; the service tells them apart by
// the Refs its store has recorded, and serialises same-size creates whose
// outcome is unknown, so the window only bounds how far back the listing
// pages. It is wide (findSkew) because it compares our clock with
// Anthropic's: a window cut by skew would miss the batch and create another.
func (a *AnthropicProvider) FindSubmitted(ctx context.Context, in service.BatchSubmit, since time.Time) ([]string, error) {
	since = since.Add(-findSkew)
	var found []string
	after := ""
	for {
		page, next, err := a.Client.List(ctx, after, findPageSize)
		if err != nil {
			return nil, fmt.Errorf("find the batch of %s: %w", in.Name, err)
		}
		old := false
		for _, b := range page {
			if b.CreatedAt.Before(since) {
				old = true // newest first: the rest are older still
				break
			}
			if b.Counts.Total() == int64(in.Records) {
				found = append(found, b.ID)
			}
		}
		if old || next == "" {
			break
		}
		after = next
	}
	return found, nil
}

// Submit creates one Message Batch from the part's request lines.
func (a *AnthropicProvider) Submit(ctx context.Context, in service.BatchSubmit) (string, error) {
	rc, err := a.Blobs.Open(ctx, in.InputURI, 0)
	if err != nil {
		return "", fmt.Errorf("open batch requests %s: %w", in.InputURI, err)
	}
	defer rc.Close()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(wrapRequests(rc, pw)) }()
	b, err := a.Client.Create(ctx, pr, in.BetaHeaders...)
	pr.CloseWithError(errors.New("create returned"))
	if err != nil && anthropic.MayHaveCreated(err) {
		// A 5xx/529 or a broken connection after the send: Anthropic may have
		// kept the batch; the service looks for it before trying again.
		err = errors.Join(service.ErrSubmitUnknown, err)
	}
	if errors.Is(err, anthropic.ErrBusy) {
		return "", errors.Join(service.ErrProviderBusy, err)
	}
	if err != nil {
		return "", err
	}
	return b.ID, nil
}

// wrapRequests turns JSONL request lines into {"requests":[line,line,...]}.
func wrapRequests(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), anthropic.MaxBytes)
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString(`{"requests":[`)
	first := true
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if !first {
			bw.WriteByte(',')
		}
		first = false
		bw.Write(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read batch requests: %w", err)
	}
	bw.WriteString(`]}`)
	return bw.Flush()
}

// Get reads a batch's processing_status.
func (a *AnthropicProvider) Get(ctx context.Context, ref string) (service.BatchState, error) {
	b, err := a.Client.Get(ctx, ref)
	if err != nil {
		return service.BatchState{}, err
	}
	return service.BatchState{Ref: b.ID, Status: b.ProcessingStatus}, nil
}

// Stop cancels a batch; results already done are kept.
func (a *AnthropicProvider) Stop(ctx context.Context, ref string) error {
	_, err := a.Client.Cancel(ctx, ref)
	return err
}

// EncodeRecord renders one request line.
func (a *AnthropicProvider) EncodeRecord(i int, model string, in job.Input, p job.Params) ([]byte, error) {
	return anthropic.EncodeRecordAt(i, model, in, p)
}

// CheckParams refuses settings the API version this suite sends refuses.
func (a *AnthropicProvider) CheckParams(model string, p job.Params) error {
	return anthropic.CheckParams(model, p)
}

// CountTokens counts a record's input tokens with Anthropic's Token Count
// API, for a dry run's sample.
func (a *AnthropicProvider) CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error) {
	n, err := a.Client.CountTokens(ctx, model, in, p)
	if errors.Is(err, anthropic.ErrBusy) {
		return 0, errors.Join(service.ErrProviderBusy, err) // throttled: the counts so far may stand
	}
	return n, err
}

// ParseOutputLine parses one results line.
func (a *AnthropicProvider) ParseOutputLine(line []byte) (job.Record, error) {
	return anthropic.ParseResultLine(line)
}

// OutputFiles is where FetchResults puts a part's results.
func (a *AnthropicProvider) OutputFiles(p job.Part) ([]string, string) {
	return []string{p.OutputURI + "results.jsonl"}, ""
}

// FetchResults streams an ended batch's results into object storage. The
// object appears only when the whole stream was copied (blob writes are atomic).
func (a *AnthropicProvider) FetchResults(ctx context.Context, p job.Part, uri string) error {
	pr, pw := io.Pipe()
	go func() {
		_, err := a.Client.Results(ctx, p.Ref, pw)
		pw.CloseWithError(err)
	}()
	_, err := a.Blobs.Put(ctx, uri, pr, "application/jsonl")
	pr.CloseWithError(errors.New("put returned"))
	return err
}

// NewAnthropicProvider builds the provider over the SDK with the API key and,
// when baseURL is set, another endpoint (the simulator).
func NewAnthropicProvider(apiKey, baseURL string, blobs ObjectStore) *AnthropicProvider {
	opts := []option.RequestOption{option.WithAPIKey(apiKey)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	return &AnthropicProvider{Client: anthropic.New(opts...), Blobs: blobs}
}

// SecretReader is what anthropicKey needs of Secrets Manager.
type SecretReader interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// anthropicKey reads the API key from Secrets Manager when the stack names a
// secret, else from the environment. The key is never logged.
func anthropicKey(ctx context.Context, sm SecretReader) (string, error) {
	if arn := os.Getenv(config.EnvAnthropicSecretARN); arn != "" {
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return "", fmt.Errorf("read the Anthropic API key secret: %w", err)
		}
		return aws.ToString(out.SecretString), nil
	}
	return os.Getenv(config.EnvAnthropicAPIKey), nil
}

// Provider adds the Anthropic provider when a key is configured. Only the
// functions that call Anthropic (mcp, ingest, reconciler) pass it to
// app.FromEnv, so the others do not link the SDK.
func Provider(ctx context.Context, e *app.Env) error {
	key, err := anthropicKey(ctx, secretsmanager.NewFromConfig(e.Config))
	if err != nil {
		// Bedrock keeps working; Anthropic submits get a clear "not configured" error.
		e.Log.ErrorContext(ctx, "Anthropic provider disabled", "error", err)
		return nil
	}
	if key == "" {
		e.Log.InfoContext(ctx, "no Anthropic API key configured; provider anthropic disabled")
		return nil
	}
	p := NewAnthropicProvider(key, os.Getenv(config.EnvAnthropicBaseURL), e.S3)
	p.ModelIDs = config.DefaultAnthropicModels
	if m := config.List(os.Getenv(config.EnvAnthropicModels)); len(m) > 0 {
		p.ModelIDs = m
	}
	e.Deps.Providers = append(e.Deps.Providers, p)
	return nil
}
