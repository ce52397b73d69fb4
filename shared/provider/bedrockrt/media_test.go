package bedrockrt_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

var update = flag.Bool("update", false, "rewrite golden files")

// memOpener serves objects from a map, as the upload area would.
type memOpener map[string][]byte

func (m memOpener) Open(_ context.Context, uri string) (io.ReadCloser, int64, error) {
	b, ok := m[uri]
	if !ok {
		return nil, 0, content.ErrNotInUploadArea
	}
	return io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
}

// A 1×1 PNG and a one-page PDF.
var (
	png1x1, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
	pdf1      = []byte("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
		"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
)

func mediaInput() job.Input {
	return job.Input{ID: "r00000000", Messages: json.RawMessage(`[{"role":"user","content":[` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + base64.StdEncoding.EncodeToString(png1x1) + `"}},` +
		`{"type":"image","source":{"type":"s3","uri":"s3://b/uploads/u/a.png"}},` +
		`{"type":"document","name":"Invoice March","source":{"type":"s3","uri":"s3://b/uploads/u/inv.pdf"}},` +
		`{"type":"text","text":"What is the total?"}]}]`)}
}

func mediaStore() *content.Store {
	return &content.Store{Opener: memOpener{"s3://b/uploads/u/a.png": png1x1, "s3://b/uploads/u/inv.pdf": pdf1}, Prefix: "s3://b/uploads/"}
}

// TestConverseMediaGolden: the Converse request the product sends on demand
// for a record with an inline image, an s3:// image and an s3:// PDF.
func TestConverseMediaGolden(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4}}`)
	}))
	defer srv.Close()
	c := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")},
		func(o *bedrockruntime.Options) {
			o.BaseEndpoint = aws.String(srv.URL)
			o.HTTPClient = sim.HTTPClient()
		}, bedrockrt.NoSDKRetries)
	m := &bedrockrt.Model{Client: c, Content: mediaStore()}
	if _, err := m.Invoke(context.Background(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", mediaInput(), job.Params{MaxTokens: 100}); err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, body, "", "  "); err != nil {
		t.Fatalf("request body is not JSON: %v: %s", err, body)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", "converse-media.golden.json")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(path, pretty.Bytes(), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if pretty.String() != string(want) {
		t.Errorf("Converse request differs (run with -update):\n%s", pretty.String())
	}
}

// TestConverseMediaThroughSimulator: the strict runtime simulator reads the
// blocks and answers with what arrived; without a store, s3 sources fail the
// record with a validation error.
func TestConverseMediaThroughSimulator(t *testing.T) {
	m := model(t, &simbedrock.RuntimeSim{})
	m.Content = mediaStore()
	res, err := m.Invoke(context.Background(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", mediaInput(), job.Params{MaxTokens: 300})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"image/png 1x1", "application/pdf 1 pages"} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("answer %q does not show %s arrived", res.Output, w)
		}
	}
	m.Content = nil
	if _, err := m.Invoke(context.Background(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", mediaInput(), job.Params{MaxTokens: 300}); err == nil || !strings.Contains(err.Error(), "s3:// sources are not available") {
		t.Errorf("without a store: %v", err)
	}
}

// countingOpener is memOpener counting the reads of each object.
type countingOpener struct {
	memOpener
	mu    sync.Mutex
	opens map[string]int
}

func (c *countingOpener) Open(ctx context.Context, uri string) (io.ReadCloser, int64, error) {
	c.mu.Lock()
	c.opens[uri]++
	c.mu.Unlock()
	return c.memOpener.Open(ctx, uri)
}

// TestMediaReadOnceAndBounded: on demand, each s3:// part of a record is read
// once (checked and sent from the same bytes), and records whose parts
// together exceed the media budget do not run at once: 4 records of 20
// images each (bounded by Converse's 3.75 MB per image when the store cannot
// tell sizes) take the budget one after another.
func TestMediaReadOnceAndBounded(t *testing.T) {
	var inFlight, peak, calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		time.Sleep(30 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"output":{"message":{"role":"assistant","content":[{"text":"ok"}]}},"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4}}`)
	}))
	defer srv.Close()
	c := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")},
		func(o *bedrockruntime.Options) {
			o.BaseEndpoint = aws.String(srv.URL)
			o.HTTPClient = sim.HTTPClient()
		}, bedrockrt.NoSDKRetries)
	objs := memOpener{}
	var blocks []string
	for i := range 20 {
		uri := fmt.Sprintf("s3://b/uploads/u/%02d.png", i)
		objs[uri] = png1x1
		blocks = append(blocks, `{"type":"image","source":{"type":"s3","uri":"`+uri+`"}}`)
	}
	op := &countingOpener{memOpener: objs, opens: map[string]int{}}
	m := &bedrockrt.Model{Client: c, Content: &content.Store{Opener: op, Prefix: "s3://b/uploads/"}}
	const records = 4
	var wg sync.WaitGroup
	errs := make(chan error, records)
	for r := range records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := job.Input{ID: fmt.Sprint("r", r), Messages: json.RawMessage(`[{"role":"user","content":[` + strings.Join(blocks, ",") + `,{"type":"text","text":"Which?"}]}]`)}
			if _, err := m.Invoke(context.Background(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", in, job.Params{MaxTokens: 10}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for uri, n := range op.opens {
		if n != records {
			t.Errorf("%s read %d times for %d records; want once per record", uri, n, records)
		}
	}
	if calls.Load() != records || peak.Load() != 1 {
		t.Errorf("%d calls, %d at once; want %d, one at a time", calls.Load(), peak.Load(), records)
	}
}

// TestCountTokensSendsTheMedia: a dry run's CountTokens request carries the
// record's images and documents themselves, as Converse does (before: the
// placeholders that stand for them until the body is sent).
func TestCountTokensSendsTheMedia(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"inputTokens":42}`)
	}))
	defer srv.Close()
	c := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")},
		func(o *bedrockruntime.Options) {
			o.BaseEndpoint = aws.String(srv.URL)
			o.HTTPClient = sim.HTTPClient()
		}, bedrockrt.NoSDKRetries)
	m := &bedrockrt.Model{Client: c, Content: mediaStore()}
	n, err := m.CountTokens(context.Background(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", mediaInput(), job.Params{MaxTokens: 100})
	if err != nil || n != 42 {
		t.Fatalf("CountTokens = %d, %v", n, err)
	}
	for name, b := range map[string][]byte{"png": png1x1, "pdf": pdf1} {
		if !bytes.Contains(body, []byte(base64.StdEncoding.EncodeToString(b))) {
			t.Errorf("the %s's bytes are not in the CountTokens request: %.300s", name, body)
		}
	}
	if bytes.Contains(body, []byte(base64.StdEncoding.EncodeToString([]byte("mcpbatch-part-")))[:16]) {
		t.Errorf("a placeholder reached Bedrock: %.300s", body)
	}
}

// TestInvokeModelKeepsCacheTokens: a native Claude body run through
// InvokeModel reports the prompt cache's read and write tokens, as Converse
// does, so the job's counts and cost include them (before: dropped; Claude's
// input_tokens leaves cached tokens out, so they were counted nowhere).
func TestInvokeModelKeepsCacheTokens(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // read before answering, as the simulators do
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",`+
			`"usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":2000,"cache_read_input_tokens":3000}}`)
	}))
	defer srv.Close()
	c := bedrockruntime.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")},
		func(o *bedrockruntime.Options) {
			o.BaseEndpoint = aws.String(srv.URL)
			o.HTTPClient = sim.HTTPClient()
		}, bedrockrt.NoSDKRetries)
	in := job.Input{ID: "c", ModelInput: json.RawMessage(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":50,"system":[{"type":"text","text":"long","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]}`)}
	res, err := (&bedrockrt.Model{Client: c}).Invoke(context.Background(), "us.anthropic.claude-sonnet-4-5-20250929-v1:0", in, job.Params{MaxTokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	if res.InputTokens != 10 || res.OutputTokens != 5 || res.CacheWriteTokens != 2000 || res.CacheReadTokens != 3000 {
		t.Fatalf("tokens in %d out %d cache write %d read %d; want 10, 5, 2000, 3000", res.InputTokens, res.OutputTokens, res.CacheWriteTokens, res.CacheReadTokens)
	}
}
