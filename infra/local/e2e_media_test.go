package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestInspectorImages: images uploaded with create_upload and referenced as
// s3:// reach the model on demand (20 records) and in batch (120 records)
// through the real MCP client; the simulators' answers show each image's
// format and size; a text-only model is refused before anything is submitted.
func TestInspectorImages(t *testing.T) {
	inspector(t)
	d := startDev(t, "-sim-fail-every", "0")

	const n = 5
	uris := make([]string, n)
	for i := range uris {
		u := structured(t, callTool(t, d, "create_upload", map[string]any{"content_type": "image/png"}))
		put(t, u, pngSized(t, 30+i, 20))
		uris[i] = u["s3_uri"].(string)
	}
	recs := func(prefix string, count int) []map[string]any {
		out := make([]map[string]any, count)
		for i := range out {
			out[i] = map[string]any{"id": fmt.Sprintf("%s-%03d", prefix, i), "messages": []any{map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "image", "source": map[string]any{"type": "s3", "uri": uris[i%n]}},
				map[string]any{"type": "text", "text": "What is in this image?"},
			}}}}
		}
		return out
	}
	const sonnet = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	for _, c := range []struct {
		mode  string
		count int
	}{{"on_demand", 20}, {"batch", 120}} {
		t.Run(c.mode, func(t *testing.T) {
			h := structured(t, callTool(t, d, "submit_batch", map[string]any{"model": sonnet, "mode": c.mode, "records": recs(c.mode, c.count)}))
			jobID := h["job_id"].(string)
			var j map[string]any
			for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
				j = structured(t, callTool(t, d, "get_job", map[string]any{"job_id": jobID}))
				if term, _ := j["terminal"].(bool); term {
					break
				}
			}
			if j["status"] != "completed" || j["succeeded"].(float64) != float64(c.count) {
				t.Fatalf("%s job = %v", c.mode, j)
			}
			res := structured(t, callTool(t, d, "get_job_results", map[string]any{"job_id": jobID, "limit": 200}))
			rows, _ := res["records"].([]any)
			if len(rows) != c.count {
				t.Fatalf("%d results, want %d", len(rows), c.count)
			}
			for _, x := range rows {
				r := x.(map[string]any)
				var i int
				fmt.Sscanf(r["id"].(string)[len(c.mode)+1:], "%03d", &i)
				want := fmt.Sprintf("image/png %dx20", 30+i%n)
				if out, _ := r["output"].(string); !strings.Contains(out, want) {
					t.Errorf("%s: output %q does not show %s arrived", r["id"], out, want)
				}
			}
		})
	}

	res := callTool(t, d, "submit_batch", map[string]any{"model": "meta.llama3-3-70b-instruct-v1:0", "mode": "on_demand", "records": recs("txt", 20)})
	if isErr, _ := res["isError"].(bool); !isErr {
		t.Fatalf("a text-only model took images: %v", res)
	}
	msg := fmt.Sprint(res["content"])
	for _, w := range []string{`record "txt-000"`, "records[0].messages[0].content[0]", "does not accept image input", "nothing was submitted"} {
		if !strings.Contains(msg, w) {
			t.Errorf("refusal %q lacks %q", msg, w)
		}
	}
}

func put(t *testing.T, u map[string]any, data []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, u["url"].(string), bytes.NewReader(data))
	for k, v := range u["headers"].(map[string]any) {
		req.Header.Set(k, v.(string))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", resp.StatusCode, body)
	}
}

func pngSized(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 8), uint8(y * 8), 200, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
