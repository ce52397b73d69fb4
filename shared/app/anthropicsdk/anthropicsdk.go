// Package anthropicsdk makes the Anthropic provider's calls through the
// official SDK: create, read, cancel and list Message Batches, count tokens
// and stream results into object storage. Only the functions that call
// Anthropic link it (ingest, reconciler, validate, providers).
package anthropicsdk

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// ObjectStore is what the Anthropic adapter needs of object storage.
type ObjectStore interface {
	Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error)
	Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error)
}

// Calls implements anthropicbatch.FetchCalls over the Message Batches client.
type Calls struct {
	Client *anthropic.Client
	Blobs  ObjectStore
}

var _ anthropicbatch.FetchCalls = (*Calls)(nil)

// findPageSize is the list page FindSubmitted reads (the API allows 1..1000).
const findPageSize = 100

// findSkew is how much earlier than our first try a batch FindSubmitted
// considers may have been created (clock skew between us and Anthropic, and a
// first try recorded after the call went out).
const findSkew = 2 * time.Hour

// FindSubmitted lists the batches a create with an unknown outcome may have
// made: those created since the first try holding exactly in.Records
// requests. An ended one is read: it is ours when a results line carries
// in's mark (wire.PartMark, put on every custom_id by Submit), else someone
// else's and left out. One still running shows nothing of ours (its results
// are not readable until it ends), so it stays unproven. The window is wide
// (findSkew) because it compares our clock with Anthropic's: a window cut by
// skew would miss the batch and create another.
func (a *Calls) FindSubmitted(ctx context.Context, in service.BatchSubmit, since time.Time) (service.Found, error) {
	since = since.Add(-findSkew)
	mark := wire.PartMark(in.Name)
	var found service.Found
	after := ""
	for {
		page, next, err := a.Client.List(ctx, after, findPageSize)
		if err != nil {
			return service.Found{}, fmt.Errorf("find the batch of %s: %w", in.Name, err)
		}
		old := false
		for _, b := range page {
			if b.CreatedAt.Before(since) {
				old = true // newest first: the rest are older still
				break
			}
			if b.Counts.Total() != int64(in.Records) {
				continue
			}
			if b.ProcessingStatus != wire.StatusEnded {
				found.Unproven = append(found.Unproven, b.ID)
				continue
			}
			got, err := a.firstMark(ctx, b.ID)
			if err != nil {
				return service.Found{}, fmt.Errorf("find the batch of %s: %w", in.Name, err)
			}
			if got == mark {
				found.Ours = append(found.Ours, b.ID)
			}
		}
		if old || next == "" {
			break
		}
		after = next
	}
	return found, nil
}

// errFirstLine stops a results stream once its first line is read.
var errFirstLine = errors.New("first results line read")

// firstLine keeps the first line written to it and then refuses more.
type firstLine struct{ buf []byte }

func (f *firstLine) Write(p []byte) (int, error) {
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		f.buf = append(f.buf, p[:i]...)
		return i, errFirstLine
	}
	f.buf = append(f.buf, p...)
	return len(p), nil
}

// firstMark is the mark on the custom_id of an ended batch's first results
// line (every line of a batch we made carries the same one).
func (a *Calls) firstMark(ctx context.Context, ref string) (string, error) {
	var w firstLine
	if _, err := a.Client.Results(ctx, ref, &w); err != nil && !errors.Is(err, errFirstLine) {
		return "", err
	}
	if len(w.buf) == 0 {
		return "", nil // no results line: nothing proves it ours
	}
	return wire.ResultMark(w.buf)
}

// Submit creates one Message Batch from the part's request lines.
func (a *Calls) Submit(ctx context.Context, in service.BatchSubmit) (string, error) {
	rc, err := a.Blobs.Open(ctx, in.InputURI, 0)
	if err != nil {
		return "", fmt.Errorf("open batch requests %s: %w", in.InputURI, err)
	}
	defer rc.Close()
	pr, pw := io.Pipe()
	mark := wire.PartMark(in.Name) // what proves the batch ours if this create's answer is lost
	go func() { pw.CloseWithError(wrapRequests(rc, pw, mark)) }()
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

// wrapRequests turns JSONL request lines into {"requests":[line,line,...]},
// each custom_id carrying mark.
func wrapRequests(r io.Reader, w io.Writer, mark string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), wire.MaxBytes)
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
		line, err := wire.MarkRequestLine(sc.Bytes(), mark)
		if err != nil {
			return fmt.Errorf("read batch requests: %w", err)
		}
		bw.Write(line)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read batch requests: %w", err)
	}
	bw.WriteString(`]}`)
	return bw.Flush()
}

// Get reads a batch's processing_status.
func (a *Calls) Get(ctx context.Context, ref string) (service.BatchState, error) {
	b, err := a.Client.Get(ctx, ref)
	if err != nil {
		return service.BatchState{}, err
	}
	return service.BatchState{Ref: b.ID, Status: b.ProcessingStatus}, nil
}

// Stop cancels a batch; results already done are kept.
func (a *Calls) Stop(ctx context.Context, ref string) error {
	_, err := a.Client.Cancel(ctx, ref)
	return err
}

// CountTokens counts a record's input tokens with Anthropic's Token Count
// API, for a dry run's sample.
func (a *Calls) CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error) {
	n, err := a.Client.CountTokens(ctx, model, in, p)
	if errors.Is(err, anthropic.ErrBusy) {
		return 0, errors.Join(service.ErrProviderBusy, err) // throttled: the counts so far may stand
	}
	return n, err
}

// FetchResults streams an ended batch's results into object storage. The
// object appears only when the whole stream was copied (blob writes are atomic).
func (a *Calls) FetchResults(ctx context.Context, p job.Part, uri string) error {
	pr, pw := io.Pipe()
	go func() {
		_, err := a.Client.Results(ctx, p.Ref, pw)
		pw.CloseWithError(err)
	}()
	_, err := a.Blobs.Put(ctx, uri, pr, "application/jsonl")
	pr.CloseWithError(errors.New("put returned"))
	return err
}

// New builds the calls over the SDK with the API key and, when baseURL is
// set, another endpoint (the simulator).
func New(apiKey, baseURL string, blobs ObjectStore) *Calls {
	opts := []option.RequestOption{option.WithAPIKey(apiKey)}
	if baseURL != "" {
		opts = append(opts, option.WithBaseURL(baseURL))
	}
	return &Calls{Client: anthropic.New(opts...), Blobs: blobs}
}

// NewProvider is the provider over the SDK, allowing the default models.
func NewProvider(apiKey, baseURL string, blobs ObjectStore) *anthropicbatch.Fetching {
	return anthropicbatch.WithResults(New(apiKey, baseURL, blobs), config.DefaultAnthropicModels)
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

// Load builds the calls from the stack's environment: the key from the
// secret the stack names (or ANTHROPIC_API_KEY, for make dev), the base URL
// from MCPBATCH_ANTHROPIC_BASE_URL. Without a key it returns nil and no error;
// a secret that cannot be read is an error.
func Load(ctx context.Context, cfg aws.Config, blobs ObjectStore) (*Calls, error) {
	key, err := anthropicKey(ctx, secretsmanager.NewFromConfig(cfg))
	if err != nil || key == "" {
		return nil, err
	}
	return New(key, os.Getenv(config.EnvAnthropicBaseURL), blobs), nil
}

// Provider is the Anthropic provider over the SDK when a key is configured
// (nil otherwise), for app.AddProvider. The functions that call Anthropic
// themselves (ingest, reconciler, validate) use it and keep serving Bedrock
// without it: a key that cannot be read is logged and leaves it out. mcp
// reaches Anthropic through the providers function and links no SDK.
func Provider(ctx context.Context, cfg aws.Config, blobs *s3blob.Store, log *slog.Logger) service.BatchProvider {
	c, err := Load(ctx, cfg, blobs)
	switch {
	case err != nil:
		// Bedrock keeps working; Anthropic submits get a clear "not configured" error.
		log.ErrorContext(ctx, "Anthropic provider disabled", "error", err)
		return nil
	case c == nil:
		log.InfoContext(ctx, "no Anthropic API key configured; provider anthropic disabled")
		return nil
	}
	return anthropicbatch.WithResults(c, anthropicbatch.ModelIDs())
}
