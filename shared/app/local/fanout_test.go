package local_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// fanoutUnitBytes cuts the test files into several byte ranges each (a line
// is about 60 bytes), so ranges meet mid-line.
const fanoutUnitBytes = 1000

// fanoutE2E skips the fan-out flows unless MCPBATCH_E2E=1 (make test sets it).
func fanoutE2E(t *testing.T) {
	t.Helper()
	if os.Getenv("MCPBATCH_E2E") != "1" || testing.Short() {
		t.Skip("fan-out flows: set MCPBATCH_E2E=1 (make test does)")
	}
}

// fanoutFile is n prompt lines of file f; every 4th without an id (generated).
func fanoutFile(f, n int) string {
	return jsonlLines(n, func(i int) string {
		if i%4 == 3 {
			return fmt.Sprintf(`{"prompt":"file %d fact %d"}`, f, i)
		}
		return fmt.Sprintf(`{"id":"f%d-%d","prompt":"Summarise fact %d of file %d"}`, f, i, i, f)
	})
}

// uploadFiles uploads each body with create_upload and returns the upload ids.
func uploadFiles(t *testing.T, cs *mcp.ClientSession, bodies ...string) []string {
	t.Helper()
	var ids []string
	for _, b := range bodies {
		up := call[mcpserver.CreateUploadOut](t, cs, "create_upload", map[string]any{})
		if code := put(t, up, b); code != http.StatusOK {
			t.Fatalf("PUT status %d", code)
		}
		ids = append(ids, up.UploadID)
	}
	return ids
}

// fanoutDone waits for a job's fan-out validation and returns it as get_job shows it.
func fanoutDone(t *testing.T, s *suite, cs *mcp.ClientSession, id string) mcpserver.JobView {
	t.Helper()
	s.l.Settle()
	if dead := s.l.Units.Dead(); len(dead) > 0 {
		t.Fatalf("units in the dead-letter list: %+v", dead)
	}
	return call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": id})
}

// fanoutResults runs the job to its end and returns its result ids.
func fanoutResults(t *testing.T, s *suite, cs *mcp.ClientSession, id string) map[string]bool {
	t.Helper()
	s.settle()
	ids := map[string]bool{}
	for _, r := range allResults(t, cs, id, "", 500) {
		ids[r.ID] = true
	}
	return ids
}

// wantFileIDs checks ids holds every explicit id of fanoutFile(f, n) and n
// ids in all for each file.
func wantFileIDs(t *testing.T, ids map[string]bool, sizes ...int) {
	t.Helper()
	total := 0
	for f, n := range sizes {
		total += n
		for i := range n {
			if i%4 != 3 && !ids[fmt.Sprintf("f%d-%d", f, i)] {
				t.Fatalf("result ids lack f%d-%d", f, i)
			}
		}
	}
	if len(ids) != total {
		t.Fatalf("%d result ids, want %d", len(ids), total)
	}
}

var _ = flow("FanoutThreeUploads", func(t *testing.T, w wiring) {
	fanoutE2E(t)
	s := newSuiteOn(t, w, local.Options{FailEvery: 10, Fanout: local.FanoutOptions{Workers: 3, UnitBytes: fanoutUnitBytes}})
	alice := s.client("alice")
	ids := uploadFiles(t, alice, fanoutFile(0, 50), fanoutFile(1, 70), fanoutFile(2, 90))
	h := submitFile(t, alice, map[string]any{"model": haiku, "input_upload_ids": ids, "name": "three"})
	j := fanoutDone(t, s, alice, h.JobID)
	if j.RecordCount != 210 || j.Error != "" || j.Status != "validating" || j.ProviderStatus != "Submitted" {
		t.Fatalf("after the fan-out: %+v", j)
	}
	wantFileIDs(t, fanoutResults(t, s, alice, h.JobID), 50, 70, 90)

	// retry_failed reads the caller records the parts kept, in pieces.
	var failed []string
	for _, r := range allResults(t, alice, h.JobID, "failed", 500) {
		failed = append(failed, r.ID)
	}
	if len(failed) == 0 {
		t.Fatal("setup: no failed records")
	}
	c := call[mcpserver.RetryOut](t, alice, "retry_failed", map[string]any{"job_id": h.JobID})
	s.settle()
	var retried []string
	for _, r := range allResults(t, alice, c.JobID, "", 500) {
		retried = append(retried, r.ID)
	}
	slices.Sort(failed)
	slices.Sort(retried)
	if c.RecordCount != len(failed) || !slices.Equal(failed, retried) {
		t.Fatalf("retry ran %v, want the failed %v", retried, failed)
	}
})

var _ = flow("FanoutFolder", func(t *testing.T, w wiring) {
	fanoutE2E(t)
	s := newSuiteOn(t, w, local.Options{Fanout: local.FanoutOptions{Workers: 2, UnitBytes: fanoutUnitBytes}})
	alice := s.client("alice")
	folder := blob.Join(local.Bucket, "inputs", service.OwnerTag("alice"), "corpus") + "/"
	ctx := context.Background()
	for f, n := range []int{40, 80} {
		if _, err := s.l.Blobs.Put(ctx, folder+fmt.Sprintf("part-%d.jsonl", f), strings.NewReader(fanoutFile(f, n)), "application/jsonl"); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("another owner's folder is refused", func(t *testing.T) {
		msg := toolErr(t, s.client("bob"), "submit_batch", map[string]any{"model": haiku, "input_uri": folder})
		if !strings.Contains(msg, "input_uri") || !strings.Contains(msg, "your own input folders") {
			t.Errorf("bob got %q", msg)
		}
	})
	h := submitFile(t, alice, map[string]any{"model": haiku, "input_uri": folder})
	if j := fanoutDone(t, s, alice, h.JobID); j.RecordCount != 120 || j.Error != "" {
		t.Fatalf("after the fan-out: %+v", j)
	}
	wantFileIDs(t, fanoutResults(t, s, alice, h.JobID), 40, 80)
})
