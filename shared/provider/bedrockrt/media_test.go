package bedrockrt_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
	"github.com/mcpbatch/mcpbatch/shared/sim"
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
		func(o *bedrockruntime.Options) { o.BaseEndpoint = aws.String(srv.URL) }, bedrockrt.NoSDKRetries)
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
	m := model(t, &sim.RuntimeSim{})
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
