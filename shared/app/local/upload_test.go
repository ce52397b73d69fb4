package local_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// put uploads body to a create_upload link as a client would, returning the status.
func put(t *testing.T, u mcpserver.CreateUploadOut, body string) int {
	t.Helper()
	req, err := http.NewRequest(u.Method, u.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range u.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func jsonlLines(n int, line func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// validated waits for the validation the submit requested (the local bus
// delivers it to the validate handler) and returns the job as get_job shows it:
// still validating (it never moves back), its parts now at the provider.
func validated(t *testing.T, s *suite, cs *mcp.ClientSession, id string) mcpserver.JobView {
	t.Helper()
	s.l.Bus.Wait()
	return call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": id})
}

// submitFile submits a file; the job answers at once in status validating.
func submitFile(t *testing.T, cs *mcp.ClientSession, args map[string]any) mcpserver.JobHandle {
	t.Helper()
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", args)
	if h.Status != "validating" || h.RecordCount != 0 || h.Parts != 0 {
		t.Fatalf("file submit answered %+v, want status validating before any record is read", h)
	}
	return h
}

// nativeBody is a Bedrock batch line's own modelInput: a Converse request,
// since prompt records run in a Converse-type job and one job runs one way.
const nativeBody = `{"messages":[{"role":"user","content":[{"text":"Say hi"}]}],"inferenceConfig":{"maxTokens":64}}`

var _ = flow("UploadSubmit", func(t *testing.T, w wiring) {
	s := newSuiteOn(t, w, local.Options{FailEvery: 10})
	s.l.Uploads.SetBaseURL(s.srv.URL)
	alice, bob := s.client("alice"), s.client("bob")

	// 150 records in both formats, some without an id (generated, avoiding r00001 which is taken).
	file := jsonlLines(150, func(i int) string {
		switch {
		case i == 0:
			return `{"id":"r00001","prompt":"taken id"}`
		case i%3 == 0:
			return fmt.Sprintf(`{"recordId":"native-%d","modelInput":%s}`, i, nativeBody)
		case i%3 == 1:
			return fmt.Sprintf(`{"prompt":"Summarise fact #%d"}`, i)
		default:
			return fmt.Sprintf(`{"id":"m%d","messages":[{"role":"user","content":"fact %d"}],"system":"be brief"}`, i, i)
		}
	})
	up := call[mcpserver.CreateUploadOut](t, alice, "create_upload", map[string]any{})
	if up.UploadID == "" || up.Method != "PUT" || up.MaxBytes != 1<<30 || up.ExpiresIn != 900 || up.Headers["Content-Type"] != "application/jsonl" {
		t.Fatalf("create_upload = %+v", up)
	}
	if code := put(t, up, file); code != http.StatusOK {
		t.Fatalf("PUT status %d", code)
	}
	t.Run("another owner cannot use the upload id", func(t *testing.T) {
		msg := toolErr(t, bob, "submit_batch", map[string]any{"model": haiku, "input_upload_id": up.UploadID})
		if !strings.Contains(msg, "input_upload_id") || !strings.Contains(msg, "not yours") {
			t.Errorf("bob got %q", msg)
		}
	})
	h := submitFile(t, alice, map[string]any{"model": haiku, "input_upload_id": up.UploadID, "name": "from-file"})
	if j := validated(t, s, alice, h.JobID); j.RecordCount != 150 || j.Status != "validating" || j.ProviderStatus != "Submitted" || j.Error != "" {
		t.Fatalf("after validation: %+v", j)
	}
	s.settle()
	got := allResults(t, alice, h.JobID, "", 500)
	ids := map[string]bool{}
	for _, r := range got {
		ids[r.ID] = true
	}
	if len(ids) != 150 || !ids["r00001"] || !ids["native-3"] || !ids["m2"] || !ids["r00002"] {
		t.Errorf("result ids (%d) lack expected ones: r00001 native-3 m2 r00002", len(ids))
	}

	t.Run("retry_failed reruns a file job's failed records as given", func(t *testing.T) {
		var failed []string
		for _, r := range got {
			if r.Status == "failed" {
				failed = append(failed, r.ID)
			}
		}
		if len(failed) == 0 {
			t.Fatal("setup: no failed records")
		}
		c := call[mcpserver.RetryOut](t, alice, "retry_failed", map[string]any{"job_id": h.JobID})
		if c.RecordCount != len(failed) || c.RetryOf != h.JobID {
			t.Fatalf("retry_failed = %+v, want %d records of %s", c, len(failed), h.JobID)
		}
		s.settle()
		var retried []string
		for _, r := range allResults(t, alice, c.JobID, "", 500) {
			retried = append(retried, r.ID)
		}
		slices.Sort(failed)
		slices.Sort(retried)
		if !slices.Equal(failed, retried) {
			t.Fatalf("retry ran ids %q, want the failed %q", retried, failed)
		}
	})
	t.Run("input_uri of a file copied to inputs/", func(t *testing.T) {
		uri := "s3://mcpbatch-local/inputs/" + service.OwnerTag("alice") + "/batch.jsonl"
		if _, err := s.l.Service.Batch.Blobs.Put(context.Background(), uri, strings.NewReader(file), "application/jsonl"); err != nil {
			t.Fatal(err)
		}
		h := submitFile(t, alice, map[string]any{"model": haiku, "input_uri": uri})
		if j := validated(t, s, alice, h.JobID); j.RecordCount != 150 || j.Status != "validating" || j.ProviderStatus != "Submitted" {
			t.Errorf("after validation: %+v", j)
		}
		// alice's inputs folder is hers alone.
		if msg := toolErr(t, bob, "submit_batch", map[string]any{"model": haiku, "input_uri": uri}); !strings.Contains(msg, "your own input folders") {
			t.Errorf("bob used alice's input: %q", msg)
		}
	})
	t.Run("input_uri of the caller's own upload", func(t *testing.T) {
		uri := s.l.Service.Transfer.NewUpload("alice").URI // same prefix as alice's uploads
		uri = uri[:strings.LastIndexByte(uri, '/')+1] + up.UploadID + ".jsonl"
		h := submitFile(t, alice, map[string]any{"model": haiku, "input_uri": uri})
		if j := validated(t, s, alice, h.JobID); j.RecordCount != 150 || j.Status != "validating" || j.ProviderStatus != "Submitted" {
			t.Errorf("after validation: %+v", j)
		}
		if msg := toolErr(t, bob, "submit_batch", map[string]any{"model": haiku, "input_uri": uri}); !strings.Contains(msg, "input_uri") {
			t.Errorf("bob reading alice's upload by uri: %q", msg)
		}
	})
})

func TestUploadValidation(t *testing.T) {
	s := newSuite(t)
	s.l.Uploads.SetBaseURL(s.srv.URL)
	cs := s.client("alice")
	upload := func(t *testing.T, body string) string {
		t.Helper()
		up := call[mcpserver.CreateUploadOut](t, cs, "create_upload", map[string]any{})
		if code := put(t, up, body); code != http.StatusOK {
			t.Fatalf("PUT status %d", code)
		}
		return up.UploadID
	}
	good := func(i int) string { return fmt.Sprintf(`{"id":"q%d","prompt":"p%d"}`, i, i) }
	broken := jsonlLines(150, func(i int) string {
		switch i {
		case 2:
			return `{"prompt": "unterminated`
		case 4:
			return `{"id":"q4","prompt":"x","temperature":1}`
		case 6:
			return `{"id":"q1","prompt":"dup"}`
		case 8:
			return `{"recordId":"z","modelInput":{},"prompt":"both"}`
		case 10:
			return `{"id":"` + strings.Repeat("x", 257) + `","prompt":"x"}`
		case 12:
			return `{"id":"q12"}`
		}
		return good(i)
	})
	manyBad := jsonlLines(150, func(i int) string {
		if i%5 == 0 {
			return "not json"
		}
		return good(i)
	})
	// Problems in the file fail the job (validated after submit_batch answered),
	// with the same texts a synchronous check gave.
	failing := []struct {
		name string
		body string
		want []string
		not  []string
	}{
		{"every bad line with its number", broken,
			[]string{"input_upload_id: 6 of 150 lines are invalid", "nothing was submitted", "line 3: not a JSON object", `line 5: unknown field "temperature"`,
				`line 7: duplicate id "q1" (also line 2)`, "line 9: mixes", "line 11: id", "line 13:"}, nil},
		{"at most 20 problems listed", manyBad, []string{"30 of 150 lines are invalid", "line 1:", "line 96:"}, []string{"line 101:"}},
		{"under the minimum", jsonlLines(50, good), []string{"input_upload_id", "50 records", "minimum of 100"}, nil},
		{"empty file", "", []string{"no records"}, nil},
	}
	var failed []string
	for _, tc := range failing {
		t.Run(tc.name, func(t *testing.T) {
			h := submitFile(t, cs, map[string]any{"model": haiku, "input_upload_id": upload(t, tc.body)})
			failed = append(failed, h.JobID)
			j := validated(t, s, cs, h.JobID)
			if j.Status != "failed" || !j.Terminal || j.RecordCount != 0 {
				t.Fatalf("job after validation: %+v, want failed", j)
			}
			for _, w := range tc.want {
				if !strings.Contains(j.Error, w) {
					t.Errorf("job error lacks %q:\n%s", w, j.Error)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(j.Error, w) {
					t.Errorf("job error has %q:\n%s", w, j.Error)
				}
			}
		})
	}
	// Problems with the request itself are still refused at once.
	tests := []struct {
		name string
		body string
		args map[string]any
		want []string
	}{
		{"records and a file", jsonlLines(100, good), map[string]any{"records": records(100)}, []string{"not both"}},
		{"bad model is checked before the file", jsonlLines(100, good), map[string]any{"model": "meta.llama3-70b"}, []string{"model"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"model": haiku, "input_upload_id": upload(t, tc.body)}
			for k, v := range tc.args {
				args[k] = v
			}
			msg := toolErr(t, cs, "submit_batch", args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
		})
	}
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"never uploaded", map[string]any{"input_upload_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"}, "no file was uploaded"},
		{"not an upload id", map[string]any{"input_upload_id": "../../etc/passwd"}, "not an upload id"},
		{"other bucket", map[string]any{"input_uri": "s3://someone-else/x.jsonl"}, "your own input folders"},
		{"suite data", map[string]any{"input_uri": "s3://mcpbatch-local/results/x.jsonl"}, "your own input folders"},
		{"not under inputs/", map[string]any{"input_uri": "s3://mcpbatch-local/other/x.jsonl"}, "your own input folders"},
		{"the shared inputs/ folder", map[string]any{"input_uri": "s3://mcpbatch-local/inputs/x.jsonl"}, "your own input folders"},
		{"nothing at the uri", map[string]any{"input_uri": "s3://mcpbatch-local/inputs/" + service.OwnerTag("alice") + "/missing.jsonl"}, "no object at"},
		{"both", map[string]any{"input_uri": "s3://mcpbatch-local/a.jsonl", "input_upload_id": "01jdz3k6r8x9y2w4v5t7q0m1n3"}, "not both"},
		{"bad content type", nil, "content_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msg string
			if tc.args == nil {
				msg = toolErr(t, cs, "create_upload", map[string]any{"content_type": "not a type"})
			} else {
				args := map[string]any{"model": haiku}
				for k, v := range tc.args {
					args[k] = v
				}
				msg = toolErr(t, cs, "submit_batch", args)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q lacks %q", msg, tc.want)
			}
		})
	}
	// Only the invalid files left jobs (failed ones); refused requests left none,
	// and nothing reached the provider.
	l := call[mcpserver.ListOut](t, cs, "list_jobs", map[string]any{})
	if len(l.Jobs) != len(failed) {
		t.Errorf("list_jobs has %d jobs, want the %d failed validations", len(l.Jobs), len(failed))
	}
	for _, j := range l.Jobs {
		if j.Status != "failed" {
			t.Errorf("job %s is %s, want failed", j.JobID, j.Status)
		}
	}
	if n := len(s.l.Sim.Statuses()); n != 0 {
		t.Errorf("the simulator holds %d provider jobs, want none", n)
	}
	t.Run("tampered or mistyped upload links are refused", func(t *testing.T) {
		up := call[mcpserver.CreateUploadOut](t, cs, "create_upload", map[string]any{})
		bad := up
		bad.URL = strings.Replace(up.URL, "sig=", "sig=0", 1)
		if code := put(t, bad, "x"); code != http.StatusForbidden {
			t.Errorf("tampered link: %d", code)
		}
		bad = up
		bad.Headers = map[string]string{"Content-Type": "text/plain"}
		if code := put(t, bad, "x"); code != http.StatusForbidden {
			t.Errorf("wrong content type: %d", code)
		}
	})
}

// noBus drops events: the validation is then run by hand.
type noBus struct{}

func (noBus) Publish(context.Context, string, any) error { return nil }

// A file submit cancelled while validating stays cancelled: the validation
// that runs afterwards submits nothing.
func TestUploadCancelWhileValidating(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	ctx := context.Background()
	uri := "s3://mcpbatch-local/inputs/" + service.OwnerTag("alice") + "/cancel.jsonl"
	body := jsonlLines(150, func(i int) string { return fmt.Sprintf(`{"id":"c%d","prompt":"p"}`, i) })
	if _, err := s.l.Service.Batch.Blobs.Put(ctx, uri, strings.NewReader(body), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	core := *s.l.Service.Core
	core.Bus = noBus{}
	held := graph.Transfer(&core, s.l.Service.Batch)
	j, err := held.SubmitFile(ctx, transfer.FileSubmitRequest{SubmitRequest: batch.SubmitRequest{Owner: "alice", Model: haiku}, InputURI: uri})
	if err != nil || j.Status != "validating" {
		t.Fatalf("submit: %v, %+v", err, j)
	}
	if c := call[mcpserver.JobView](t, cs, "cancel_job", map[string]any{"job_id": j.ID}); c.Status != "cancelled" {
		t.Fatalf("cancel_job while validating = %+v, want cancelled", c)
	}
	if err := s.l.Service.Transfer.ValidateFile(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if got := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": j.ID}); got.Status != "cancelled" || !got.Terminal || got.RecordCount != 0 {
		t.Errorf("after the validation ran: %+v", got)
	}
	if n := len(s.l.Sim.Statuses()); n != 0 {
		t.Errorf("the simulator holds %d provider jobs, want none", n)
	}
}

// A file submit whose validation event was lost is recovered by the
// reconciler: after an hour it asks again (and the job is validated and
// submitted); when that is lost too, an hour later the job fails.
func TestUploadStuckValidating(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	ctx := context.Background()
	uri := "s3://mcpbatch-local/inputs/" + service.OwnerTag("alice") + "/stuck.jsonl"
	body := jsonlLines(150, func(i int) string { return fmt.Sprintf(`{"id":"s%d","prompt":"p"}`, i) })
	if _, err := s.l.Service.Batch.Blobs.Put(ctx, uri, strings.NewReader(body), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	// at is the suite's graph seen from a later time, with the given bus.
	at := func(later time.Duration, bus service.Publisher) *reconcile.Service {
		core := *s.l.Service.Core
		core.Clock = func() time.Time { return time.Now().Add(later) }
		core.Bus = bus
		return graph.Reconciler(&core, s.l.Service.Batch, graph.Transfer(&core, s.l.Service.Batch))
	}
	submit := func(t *testing.T) string {
		lost := *s.l.Service.Core
		lost.Bus = noBus{}
		j, err := graph.Transfer(&lost, s.l.Service.Batch).SubmitFile(ctx,
			transfer.FileSubmitRequest{SubmitRequest: batch.SubmitRequest{Owner: "alice", Model: haiku}, InputURI: uri})
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	get := func(id string) mcpserver.JobView {
		return call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": id})
	}
	t.Run("asked again, validated", func(t *testing.T) {
		id := submit(t)
		if _, err := at(10*time.Minute, s.l.Bus).Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		s.l.Bus.Wait()
		if j := get(id); j.Status != "validating" {
			t.Fatalf("after 10 minutes: %+v, want still validating", j)
		}
		if _, err := at(2*time.Hour, s.l.Bus).Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		s.l.Bus.Wait()
		if j := get(id); j.Status != "validating" || j.ProviderStatus != "Submitted" || j.RecordCount != 150 {
			t.Errorf("after the reconciler asked again: %+v", j)
		}
	})
	t.Run("lost four times, failed", func(t *testing.T) {
		id := submit(t)
		for i, later := range []time.Duration{2 * time.Hour, 4 * time.Hour, 6 * time.Hour} {
			if _, err := at(later, noBus{}).Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if j := get(id); j.Status != "validating" || j.ProviderStatus != "InputValidationRetried" {
				t.Fatalf("after request %d was lost: %+v, want still validating", i+2, j)
			}
		}
		if _, err := at(8*time.Hour, noBus{}).Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		if j := get(id); j.Status != "failed" || !strings.Contains(j.Error, "not validated within 4h0m0s (4 requests); nothing was submitted") {
			t.Errorf("after the fourth request was lost: %+v", j)
		}
	})
}

// TestUploadStatusNeverBackwards: a file job's status as get_job shows it
// only moves forward, from the input check through the provider's own
// validation to the end (it used to go validating → submitted → validating).
func TestUploadStatusNeverBackwards(t *testing.T) {
	s := newSuite(t)
	s.l.Uploads.SetBaseURL(s.srv.URL)
	cs := s.client("alice")
	up := call[mcpserver.CreateUploadOut](t, cs, "create_upload", map[string]any{})
	if code := put(t, up, jsonlLines(150, func(i int) string { return fmt.Sprintf(`{"prompt":"fact %d"}`, i) })); code != http.StatusOK {
		t.Fatalf("PUT status %d", code)
	}
	h := submitFile(t, cs, map[string]any{"model": haiku, "input_upload_id": up.UploadID})
	seen := []string{h.Status}
	rank := func(st string) int { return job.Status(st).Rank() }
	for i := 0; i < 30; i++ {
		s.l.Bus.Wait()
		j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
		if last := seen[len(seen)-1]; last != j.Status {
			seen = append(seen, j.Status)
			if rank(j.Status) < rank(last) {
				t.Errorf("status moved backwards %s → %s (seen %v)", last, j.Status, seen)
			}
		}
		if j.Terminal {
			break
		}
		s.l.Sim.Step(context.Background())
	}
	if !slices.Contains(seen, "in_progress") || !job.Status(seen[len(seen)-1]).Terminal() {
		t.Errorf("statuses %v: want in_progress and a terminal end", seen)
	}
}
