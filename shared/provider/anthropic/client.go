package anthropic

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

var (
	// ErrBusy: Anthropic is rate limiting or overloaded (429, 529, 5xx); try later.
	ErrBusy = errors.New("anthropic busy")
	// ErrNotFound: no such batch (404).
	ErrNotFound = errors.New("anthropic batch not found")
)

// Counts are a batch's request_counts. Every request counts as processing
// until the whole batch ends.
type Counts struct {
	Processing, Succeeded, Errored, Canceled, Expired int64
}

// Batch is what this suite needs of a Message Batch.
type Batch struct {
	ID               string
	ProcessingStatus string
	Counts           Counts
	CancelInitiated  bool
	ResultsURL       string
	CreatedAt        time.Time
}

// Total is the number of requests in the batch, whatever their state.
func (c Counts) Total() int64 {
	return c.Processing + c.Succeeded + c.Errored + c.Canceled + c.Expired
}

// Client calls the Message Batches API through the official SDK.
type Client struct {
	SDK sdk.Client
}

// New builds a client; pass option.WithAPIKey and, for the simulator, option.WithBaseURL.
func New(opts ...option.RequestOption) *Client {
	return &Client{SDK: sdk.NewClient(opts...)}
}

func batchOf(b *sdk.MessageBatch) Batch {
	return Batch{
		ID: b.ID, ProcessingStatus: string(b.ProcessingStatus), ResultsURL: b.ResultsURL, CreatedAt: b.CreatedAt,
		CancelInitiated: !b.CancelInitiatedAt.IsZero(),
		Counts: Counts{Processing: b.RequestCounts.Processing, Succeeded: b.RequestCounts.Succeeded,
			Errored: b.RequestCounts.Errored, Canceled: b.RequestCounts.Canceled, Expired: b.RequestCounts.Expired},
	}
}

// classify wraps SDK errors with ErrBusy or ErrNotFound; the message keeps
// Anthropic's own text (never the API key, which travels in a header only).
func classify(op string, err error) error {
	var ae *sdk.Error
	if errors.As(err, &ae) {
		switch {
		case ae.StatusCode == http.StatusNotFound:
			return fmt.Errorf("%s: %w: %s", op, ErrNotFound, ae.Message)
		case ae.StatusCode == http.StatusTooManyRequests || ae.StatusCode >= 500:
			return fmt.Errorf("%s: %w (HTTP %d): %s", op, ErrBusy, ae.StatusCode, ae.Message)
		}
		return fmt.Errorf("%s: HTTP %d: %s", op, ae.StatusCode, ae.Message)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// MayHaveCreated reports whether a failed Create may still have made the
// batch: a server error (5xx, 529 overloaded) or no HTTP answer at all (a
// transport error after the send). A 4xx, 429 included, refused it.
func MayHaveCreated(err error) bool {
	var ae *sdk.Error
	if errors.As(err, &ae) {
		return ae.StatusCode >= 500
	}
	return err != nil && !errors.Is(err, context.Canceled)
}

// Create starts a batch from a streamed request body ({"requests": [...]}, up
// to 256 MB), so the requests are never all in memory. The body cannot be
// replayed, so the SDK does not retry; a busy answer leaves the caller to retry.
// betas go out as the anthropic-beta header (e.g. output-300k-2026-03-24,
// which lifts max_tokens to the model's batch maximum).
func (c *Client) Create(ctx context.Context, body io.Reader, betas ...string) (Batch, error) {
	opts := []option.RequestOption{option.WithRequestBody("application/json", body), option.WithMaxRetries(0)}
	if len(betas) > 0 {
		opts = append(opts, option.WithHeader("anthropic-beta", strings.Join(betas, ",")))
	}
	b, err := c.SDK.Messages.Batches.New(ctx, sdk.MessageBatchNewParams{}, opts...)
	if err != nil {
		return Batch{}, classify("create message batch", err)
	}
	return batchOf(b), nil
}

// Get reads a batch.
func (c *Client) Get(ctx context.Context, id string) (Batch, error) {
	b, err := c.SDK.Messages.Batches.Get(ctx, id, sdk.MessageBatchGetParams{})
	if err != nil {
		return Batch{}, classify("get message batch "+id, err)
	}
	return batchOf(b), nil
}

// Cancel asks Anthropic to cancel a batch; requests already done keep their results.
func (c *Client) Cancel(ctx context.Context, id string) (Batch, error) {
	b, err := c.SDK.Messages.Batches.Cancel(ctx, id, sdk.MessageBatchCancelParams{})
	if err != nil {
		return Batch{}, classify("cancel message batch "+id, err)
	}
	return batchOf(b), nil
}

// List returns one page of batches, newest first, after the batch id afterID
// (empty: from the start); next is the id to pass for the following page.
func (c *Client) List(ctx context.Context, afterID string, limit int64) ([]Batch, string, error) {
	p := sdk.MessageBatchListParams{Limit: sdk.Int(limit)}
	if afterID != "" {
		p.AfterID = sdk.String(afterID)
	}
	page, err := c.SDK.Messages.Batches.List(ctx, p)
	if err != nil {
		return nil, "", classify("list message batches", err)
	}
	out := make([]Batch, 0, len(page.Data))
	for i := range page.Data {
		out = append(out, batchOf(&page.Data[i]))
	}
	next := ""
	if page.HasMore {
		next = page.LastID
	}
	return out, next, nil
}

// Results streams an ended batch's results to w as JSONL, line by line in the
// order Anthropic sends them (any order), and returns the number of lines.
func (c *Client) Results(ctx context.Context, id string, w io.Writer) (int, error) {
	stream := c.SDK.Messages.Batches.ResultsStreaming(ctx, id, sdk.MessageBatchResultsParams{})
	defer stream.Close()
	bw := bufio.NewWriterSize(w, 256<<10)
	n := 0
	for stream.Next() {
		cur := stream.Current()
		if _, err := bw.WriteString(cur.RawJSON()); err != nil {
			return n, fmt.Errorf("write results of %s: %w", id, err)
		}
		bw.WriteByte('\n')
		n++
	}
	if err := stream.Err(); err != nil {
		return n, classify("stream results of "+id, err)
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("write results of %s: %w", id, err)
	}
	return n, nil
}
