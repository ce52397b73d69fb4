package local_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

const sonnet45 = "anthropic.claude-sonnet-4-5-20250929-v1:0"

// pngOf is a w×h PNG; noise makes it incompressible (for size limits).
func pngOf(t *testing.T, w, h int, noise bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.NRGBA{uint8(x), uint8(y), 128, 255}
			if noise {
				c = color.NRGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upload puts data through create_upload and returns its s3_uri.
func upload(t *testing.T, cs *mcp.ClientSession, contentType string, data []byte) string {
	t.Helper()
	u := call[mcpserver.CreateUploadOut](t, cs, "create_upload", map[string]any{"content_type": contentType})
	if u.S3URI == "" {
		t.Fatalf("create_upload %s: no s3_uri: %+v", contentType, u)
	}
	req, _ := http.NewRequest(http.MethodPut, u.URL, bytes.NewReader(data))
	for k, v := range u.Headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT %s: %d %s", u.URL, res.StatusCode, body)
	}
	return u.S3URI
}

func s3Image(uri string) map[string]any {
	return map[string]any{"type": "image", "source": map[string]any{"type": "s3", "uri": uri}}
}

func b64Image(mediaType string, data []byte) map[string]any {
	return map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": mediaType, "data": base64.StdEncoding.EncodeToString(data)}}
}

func imageRecord(id string, blocks ...map[string]any) map[string]any {
	content := []any{}
	for _, b := range blocks {
		content = append(content, b)
	}
	content = append(content, map[string]any{"type": "text", "text": "Describe this image in one line."})
	return map[string]any{"id": id, "messages": []any{map[string]any{"role": "user", "content": content}}}
}

// finish steps the simulators until the job is terminal.
func (s *suite) finish(cs *mcp.ClientSession, jobID string) mcpserver.JobView {
	s.t.Helper()
	for i := 0; i < 60; i++ {
		s.l.Bus.Wait()
		j := call[mcpserver.JobView](s.t, cs, "get_job", map[string]any{"job_id": jobID})
		if j.Terminal {
			return j
		}
		s.l.Sim.Step(context.Background())
	}
	s.t.Fatalf("job %s not terminal", jobID)
	return mcpserver.JobView{}
}

// TestImagesOnDemandAndBatch: images uploaded with create_upload reach the
// model on both paths (the simulators answer with each image's format and
// size), and a text-only model is refused before anything is submitted.
func TestImagesOnDemandAndBatch(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	uris := make([]string, 20)
	for i := range uris {
		uris[i] = upload(t, cs, "image/png", pngOf(t, 40+i, 30, false))
	}
	want := func(i int) string { return fmt.Sprintf("image/png %dx30", 40+i%20) }

	od := make([]map[string]any, 20)
	for i := range od {
		od[i] = imageRecord(fmt.Sprintf("od-%02d", i), s3Image(uris[i]))
	}
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": sonnet45, "records": od, "mode": "on_demand"})
	j := s.finish(cs, h.JobID)
	if j.Status != "completed" || j.Succeeded != 20 {
		t.Fatalf("on-demand job = %+v", j)
	}
	for k, r := range allResults(t, cs, h.JobID, "", 100) {
		if k == 0 {
			t.Logf("on-demand answer: %s", r.Output)
		}
		var i int
		fmt.Sscanf(r.ID, "od-%02d", &i)
		if !strings.Contains(r.Output, want(i)) {
			t.Errorf("on demand %s: output %q does not show %s arrived", r.ID, r.Output, want(i))
		}
	}

	recs := make([]map[string]any, 120)
	for i := range recs {
		recs[i] = imageRecord(fmt.Sprintf("b-%03d", i), s3Image(uris[i%20]))
	}
	h = call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": sonnet45, "records": recs, "mode": "batch"})
	j = s.finish(cs, h.JobID)
	if j.Status != "completed" || j.Succeeded != 120 {
		t.Fatalf("batch job = %+v", j)
	}
	for k, r := range allResults(t, cs, h.JobID, "", 200) {
		if k == 0 {
			t.Logf("batch answer: %s", r.Output)
		}
		var i int
		fmt.Sscanf(r.ID, "b-%03d", &i)
		if !strings.Contains(r.Output, want(i)) {
			t.Errorf("batch %s: output %q does not show %s arrived", r.ID, r.Output, want(i))
		}
	}

	msg := toolErr(t, cs, "submit_batch", map[string]any{"model": textOnly, "records": recs[:20], "mode": "on_demand"})
	for _, w := range []string{`record "b-000"`, "records[0].messages[0].content[0]", "does not accept image input"} {
		if !strings.Contains(msg, w) {
			t.Errorf("text-only model: error %q lacks %q", msg, w)
		}
	}
}

// TestImageBadInput: each bad block is a tool error naming the record id, the
// block and the limit, and nothing is submitted.
func TestImageBadInput(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	other := s.client("mallory")
	good := pngOf(t, 16, 16, false)
	theirs := upload(t, other, "image/png", good)
	mine := upload(t, cs, "image/png", good)
	big := upload(t, cs, "image/png", pngOf(t, 1200, 1200, true)) // ~5.5 MB of noise
	tooMany := make([]map[string]any, 21)
	for i := range tooMany {
		tooMany[i] = b64Image("image/png", good)
	}
	cases := []struct {
		name, model, mode string
		block             []map[string]any
		want              []string
	}{
		{"text-only model", textOnly, "on_demand", []map[string]any{b64Image("image/png", good)}, []string{"content[0]", "does not accept image input"}},
		{"truncated image", sonnet45, "on_demand", []map[string]any{b64Image("image/png", good[:len(good)-20])}, []string{"content[0]", "truncated"}},
		{"format contradicted", sonnet45, "on_demand", []map[string]any{b64Image("image/jpeg", good)}, []string{"content[0]", "image/jpeg"}},
		{"over the pixel limit", sonnet45, "on_demand", []map[string]any{b64Image("image/png", pngOf(t, 8001, 2, false))}, []string{"content[0]", "8001x2", "limit: bedrock-converse: image at most 8000x8000 px"}},
		{"over the byte limit", sonnet45, "on_demand", []map[string]any{s3Image(big)}, []string{"content[0]", "limit:"}},
		{"too many images", sonnet45, "on_demand", tooMany, []string{"messages: has 21 images", "limit: bedrock-converse: at most 20 images per request"}},
		{"another caller's upload", sonnet45, "on_demand", []map[string]any{s3Image(theirs)}, []string{"content[0].source.uri", "no such object in your upload area"}},
		{"missing upload", sonnet45, "on_demand", []map[string]any{s3Image(strings.TrimSuffix(mine, ".png") + "x.png")}, []string{"content[0].source.uri", "no such object in your upload area"}},
		{"image without a source", sonnet45, "on_demand", []map[string]any{{"type": "image"}}, []string{"content[0]", "source"}},
		// Bedrock batch jobs carry documents now (Converse-type jobs), under Converse's rules.
		{"document named against Converse's rule in a Bedrock batch", sonnet45, "batch", []map[string]any{{"type": "document", "name": "invoice #1", "source": map[string]any{"type": "base64", "media_type": "text/plain", "data": base64.StdEncoding.EncodeToString([]byte("hello"))}}}, []string{"content[0].name", "Converse document name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 3
			if c.mode == "batch" {
				n = 100
			}
			recs := make([]map[string]any, n)
			for i := range recs {
				recs[i] = imageRecord(fmt.Sprintf("ok-%03d", i), s3Image(mine))
			}
			recs[n-1] = imageRecord("bad-one", c.block...)
			msg := toolErr(t, cs, "submit_batch", map[string]any{"model": c.model, "records": recs, "mode": c.mode})
			want := append([]string{`record "bad-one"`, fmt.Sprintf("records[%d]", n-1), "nothing was submitted"}, c.want...)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
	if list := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{}); len(list.Jobs) != 0 {
		t.Fatalf("bad input submitted jobs: %+v", list.Jobs)
	}
}

// TestImageDryRun: a dry run estimates tokens, cost and provider jobs, lists
// problems, and stores nothing.
func TestImageDryRun(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	uri := upload(t, cs, "image/png", pngOf(t, 1000, 500, false))
	recs := make([]map[string]any, 120)
	for i := range recs {
		recs[i] = imageRecord(fmt.Sprintf("d-%03d", i), s3Image(uri))
	}
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": sonnet45, "records": recs, "dry_run": true})
	d := h.DryRun
	if d == nil || h.JobID != "" || d.Mode != "batch" || len(d.Parts) != 1 || d.Parts[0] != 120 || len(d.Problems) != 0 {
		t.Fatalf("dry run = %+v / %+v", h, d)
	}
	// 1000×500 px is 667 tokens by Anthropic's formula; the text adds a few.
	if per := d.EstimatedInputTokens / 120; per < 667 || per > 700 {
		t.Errorf("estimated %d input tokens per record, want 667 + a few", per)
	}
	if d.Cost.Total <= 0 || d.Cost.Basis != "batch" || d.Content == nil || d.Content.Blocks["image"] != 120 {
		t.Errorf("dry run cost/content = %+v / %+v", d.Cost, d.Content)
	}
	recs[7] = imageRecord("d-bad", b64Image("image/png", []byte("not a png at all")))
	h = call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": sonnet45, "records": recs, "dry_run": true})
	if len(h.DryRun.Problems) != 1 || !strings.Contains(h.DryRun.Problems[0], `record "d-bad"`) {
		t.Errorf("dry run problems = %q", h.DryRun.Problems)
	}
	if list := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{}); len(list.Jobs) != 0 {
		t.Fatalf("dry run stored jobs: %+v", list.Jobs)
	}
}

// TestImageFileSubmit: a JSONL file whose records reference uploaded images
// is checked line by line and its parts carry the images.
func TestImageFileSubmit(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	uri := upload(t, cs, "image/png", pngOf(t, 77, 33, false))
	var file bytes.Buffer
	for i := 0; i < 100; i++ {
		line, _ := json.Marshal(imageRecord(fmt.Sprintf("f-%03d", i), s3Image(uri)))
		file.Write(line)
		file.WriteByte('\n')
	}
	good := file.Bytes()
	bad := append(bytes.Clone(good), []byte(`{"id":"f-bad","messages":[{"role":"user","content":[{"type":"image","source":{"type":"s3","uri":"s3://mcpbatch-local/uploads/elsewhere/x.png"}}]}]}`+"\n")...)
	id := uploadFile(t, cs, bad)
	// The file is validated after the submit answers: the job ends failed with the problems.
	bh := submitFile(t, cs, map[string]any{"model": sonnet45, "input_upload_id": id})
	fj := validated(t, s, cs, bh.JobID)
	if fj.Status != "failed" {
		t.Fatalf("bad file job = %+v, want failed", fj)
	}
	msg := fj.Error
	for _, w := range []string{"line 101", `record "f-bad"`, "content[0].source.uri", "no such object in your upload area"} {
		if !strings.Contains(msg, w) {
			t.Errorf("file error %q lacks %q", msg, w)
		}
	}
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": sonnet45, "input_upload_id": uploadFile(t, cs, good)})
	j := s.finish(cs, h.JobID)
	if j.Status != "completed" || j.Succeeded != 100 {
		t.Fatalf("file job = %+v", j)
	}
	for _, r := range allResults(t, cs, h.JobID, "", 200) {
		if !strings.Contains(r.Output, "image/png 77x33") {
			t.Fatalf("%s: output %q does not show the image", r.ID, r.Output)
		}
	}
}

func uploadFile(t *testing.T, cs *mcp.ClientSession, data []byte) string {
	t.Helper()
	u := call[mcpserver.CreateUploadOut](t, cs, "create_upload", map[string]any{})
	req, _ := http.NewRequest(http.MethodPut, u.URL, bytes.NewReader(data))
	for k, v := range u.Headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d", res.StatusCode)
	}
	return u.UploadID
}

// TestDryRunCountsNoOtherCallersUpload: a dry run naming another caller's
// upload lists the problem and counts nothing, so the token counter never
// reads that object (before: it was read and counted, and a made-up key
// failed the count differently, telling whether the upload exists).
func TestDryRunCountsNoOtherCallersUpload(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	theirs := upload(t, s.client("mallory"), "image/png", pngOf(t, 16, 16, false))
	missing := strings.TrimSuffix(theirs, ".png") + "x.png"
	for _, uri := range []string{theirs, missing} {
		d := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": sonnet45, "mode": "on_demand", "dry_run": true,
			"records": []map[string]any{imageRecord("r1", s3Image(uri))}})
		if d.DryRun == nil || len(d.DryRun.Problems) == 0 || d.DryRun.Counted != nil || !strings.Contains(d.DryRun.NotCounted, "media problems") {
			t.Fatalf("dry run naming %s: %+v; want the problem listed and nothing counted", uri, d.DryRun)
		}
	}
}
