package local_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

func clientFor(owner string) *http.Client { return &http.Client{Transport: ownerTransport{owner}} }

// finishedJob submits n records as owner and runs the simulator to the end.
func (s *suite) finishedJob(cs *mcp.ClientSession, n int) string {
	s.t.Helper()
	h := call[mcpserver.JobHandle](s.t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(n), "name": "features"})
	s.settle()
	return h.JobID
}

// readURL reads what an export link points at: make dev's signed
// /local/objects link once the server's base URL is set, else a file:// URL.
func readURL(t *testing.T, link string) []byte {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("link %q: %v", link, err)
	}
	if u.Scheme == "file" {
		b, err := os.ReadFile(u.Path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	disposition := resp.Header.Get("Content-Disposition")
	if disposition == "" {
		// An S3 link asks for it in its query; moto 5.2.1 ignores
		// GetObject's response-* overrides (s3blob's test checks the link).
		disposition = u.Query().Get("response-content-disposition")
	}
	if err != nil || resp.StatusCode != http.StatusOK || !strings.HasPrefix(disposition, "attachment") {
		t.Fatalf("GET %s: %d %v %q", link, resp.StatusCode, err, b)
	}
	return b
}

var _ = flow("ExportResults", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{FailEvery: 10})
	cs := s.client("alice")
	id := s.finishedJob(cs, 150)
	tests := []struct {
		name, format, status string
		want                 int
	}{
		{"jsonl, all", "", "", 150},
		{"jsonl, failed only", "jsonl", "failed", 15},
		{"csv, succeeded only", "csv", "succeeded", 135},
		{"csv, all", "csv", "all", 150},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"job_id": id}
			if tc.format != "" {
				args["format"] = tc.format
			}
			if tc.status != "" {
				args["status"] = tc.status
			}
			out := call[mcpserver.ExportOut](t, cs, "export_results", args)
			if out.Records != tc.want || !out.Complete || out.JobStatus != "partially_completed" || out.ExpiresIn != 900 {
				t.Fatalf("export = %+v, want %d records of a complete job", out, tc.want)
			}
			body := readURL(t, out.URL)
			if int64(len(body)) != out.Bytes {
				t.Errorf("file has %d bytes, export says %d", len(body), out.Bytes)
			}
			ids := map[string]string{}
			if tc.format == "csv" {
				rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(rows[0], ",") != "id,status,output,output_uri,stop_reason,error_code,error_message,input_tokens,output_tokens,path,output_json" {
					t.Errorf("header %v", rows[0])
				}
				for _, r := range rows[1:] {
					ids[r[0]] = r[1]
				}
			} else {
				sc := bufio.NewScanner(strings.NewReader(string(body)))
				for sc.Scan() {
					var l struct{ ID, Status, Output, ErrorMessage string }
					if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
						t.Fatalf("line %q: %v", sc.Text(), err)
					}
					if l.Status == "succeeded" && !strings.Contains(l.Output, "[simulated]") {
						t.Errorf("record %s output %q", l.ID, l.Output)
					}
					ids[l.ID] = l.Status
				}
			}
			if len(ids) != tc.want {
				t.Errorf("file holds %d distinct records, want %d", len(ids), tc.want)
			}
			for rid, st := range ids {
				if tc.status != "" && tc.status != "all" && st != tc.status {
					t.Errorf("record %s is %s in a %s export", rid, st, tc.status)
				}
			}
		})
	}
	t.Run("bad input", func(t *testing.T) {
		for _, c := range []struct {
			args map[string]any
			want []string
		}{
			{map[string]any{"job_id": id, "format": "xlsx"}, []string{"format", "jsonl, csv or parquet"}},
			{map[string]any{"job_id": id, "status": "done"}, []string{"status", "succeeded"}},
			{map[string]any{"job_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"}, []string{"job not found"}},
		} {
			msg := toolErr(t, cs, "export_results", c.args)
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		}
	})
})

// A client that sends a progressToken hears how far a long export is.
func TestExportProgress(t *testing.T) {
	s := newSuite(t)
	var mu sync.Mutex
	var got []*mcp.ProgressNotificationParams
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.srv.URL + "/mcp", HTTPClient: clientFor("alice"), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	id := s.finishedJob(cs, 1200)
	params := &mcp.CallToolParams{Name: "export_results", Arguments: map[string]any{"job_id": id}}
	params.SetProgressToken("export-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("export: %v %s", err, text(res))
	}
	waitForNotes(&mu, func() int { return len(got) }, 3)
	mu.Lock()
	defer mu.Unlock()
	// 1,200 records are three pages of 500: three notifications, rising to the total.
	// The client may run the handlers concurrently: order by progress before checking.
	slices.SortFunc(got, func(a, b *mcp.ProgressNotificationParams) int { return int(a.Progress - b.Progress) })
	if len(got) != 3 {
		t.Fatalf("got %d progress notifications, want 3: %+v", len(got), got)
	}
	for i, p := range got {
		if p.ProgressToken != "export-1" || p.Total != 1200 || (i > 0 && p.Progress <= got[i-1].Progress) {
			t.Errorf("notification %d = %+v", i, p)
		}
	}
	if got[2].Progress != 1200 || !strings.Contains(got[2].Message, "1200 of 1200") {
		t.Errorf("last notification = %+v", got[2])
	}
}

func TestResources(t *testing.T) {
	s := newSuite(t)
	alice, bob := s.client("alice"), s.client("bob")
	id := s.finishedJob(alice, 120)
	ctx := context.Background()

	tmpls, err := alice.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, tm := range tmpls.ResourceTemplates {
		uris = append(uris, tm.URITemplate)
	}
	if strings.Join(uris, " ") != "mcpbatch://jobs/{job_id} mcpbatch://jobs/{job_id}/results" {
		t.Errorf("templates %v", uris)
	}

	list, err := alice.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The MCP App's two ui:// pages come first for everyone, then the caller's jobs.
	uriOf := func(rs []*mcp.Resource) (out []string) {
		for _, r := range rs {
			out = append(out, r.URI)
		}
		return out
	}
	if got := uriOf(list.Resources); !slices.Equal(got, []string{"ui://mcpbatch/job", "ui://mcpbatch/jobs", "mcpbatch://jobs/" + id}) || list.Resources[2].Name != "features" {
		t.Fatalf("alice's resources = %v", got)
	}
	if l, err := bob.ListResources(ctx, nil); err != nil || !slices.Equal(uriOf(l.Resources), []string{"ui://mcpbatch/job", "ui://mcpbatch/jobs"}) {
		t.Fatalf("bob's resources = %+v, %v", l, err)
	}
	app, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://mcpbatch/job"})
	if err != nil || len(app.Contents) != 1 || app.Contents[0].MIMEType != "text/html;profile=mcp-app" || !strings.Contains(app.Contents[0].Text, "Content-Security-Policy") {
		t.Fatalf("reading the App: %v", err)
	}

	var view mcpserver.JobView
	readJSON(t, alice, "mcpbatch://jobs/"+id, &view)
	if view.JobID != id || view.Status != "partially_completed" || view.Succeeded != 108 || view.Failed != 12 {
		t.Errorf("job resource = %+v", view)
	}
	var page mcpserver.ResultsOut
	readJSON(t, alice, "mcpbatch://jobs/"+id+"/results", &page)
	if page.JobID != id || len(page.Records) != 100 || page.NextCursor == "" {
		t.Errorf("results resource: %d records, next %q", len(page.Records), page.NextCursor)
	}

	for _, uri := range []string{"mcpbatch://jobs/" + id, "mcpbatch://jobs/" + id + "/results", "mcpbatch://jobs/01jdz3k6r8x9y2w4v5t7q0m1n3", "mcpbatch://jobs/../x"} {
		t.Run("bob reads "+uri, func(t *testing.T) {
			_, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err == nil || !strings.Contains(strings.ToLower(err.Error()), "not found") {
				t.Errorf("err %v, want resource not found", err)
			}
		})
	}
}

func readJSON(t *testing.T, cs *mcp.ClientSession, uri string, v any) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), v); err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
}

// Every tool and resource that names a job hides another owner's job as "job not found".
func TestOwnerIsolationEveryTool(t *testing.T) {
	s := newSuite(t)
	alice, bob := s.client("alice"), s.client("bob")
	id := s.finishedJob(alice, 100)
	tools := []struct {
		tool string
		args map[string]any
	}{
		{"get_job", map[string]any{"job_id": id}},
		{"get_job_results", map[string]any{"job_id": id}},
		{"get_job_results", map[string]any{"job_id": id, "status": "failed"}},
		{"cancel_job", map[string]any{"job_id": id}},
		{"export_results", map[string]any{"job_id": id}},
		{"export_results", map[string]any{"job_id": id, "format": "csv"}},
	}
	for _, tc := range tools {
		t.Run(tc.tool, func(t *testing.T) {
			if msg := toolErr(t, bob, tc.tool, tc.args); !strings.Contains(msg, "job not found") {
				t.Errorf("bob got %q", msg)
			}
			res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil || res.IsError {
				t.Errorf("alice: %v %s", err, text(res))
			}
		})
	}
	if l := call[mcpserver.ListOut](t, bob, "list_jobs", map[string]any{}); len(l.Jobs) != 0 {
		t.Errorf("bob lists %d jobs", len(l.Jobs))
	}
}

// waitForNotes waits up to 10 s until count (read under mu) reaches want: the
// client hands notifications to its handler asynchronously.
func waitForNotes(mu *sync.Mutex, count func() int, want int) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := count()
		mu.Unlock()
		if n >= want {
			return
		}
	}
}
