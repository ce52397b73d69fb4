package batch

import (
	"context"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/ingest"
	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// runRequests is the on-demand flow as startRedrive uses it: it counts run requests.
type runRequests struct{ n int }

func (r *runRequests) ContinueOnDemand(context.Context, string) error { r.n++; return nil }

func (r *runRequests) SubmitOnDemand(context.Context, SubmitRequest) (*job.Job, error) {
	panic("not used by a re-drive")
}

// A second "Job Output Ready" whose ingest loaded the job before the first
// set the re-drive up, and reaches startRedrive after the run stored results
// of its own, writes the run's input again as it was: never a shorter file
// under the running re-drive's offset and line.
func TestStaleIngestKeepsTheRedriveInput(t *testing.T) {
	ctx := context.Background()
	st, blobs := localdeps.New(t)
	runs := &runRequests{}
	s := &Service{Store: st, Blobs: blobs, Bucket: "s3://test", OnDemand: runs}
	now := time.Now().UTC()
	ids := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	j := &job.Job{ID: "01jq0000000000000000000001", Owner: "alice", Provider: job.ProviderBedrock, Mode: job.ModeBatch,
		Status: job.StatusIngesting, RecordCount: len(ids), Shards: 1, TTLDays: 7, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(24 * time.Hour), InputURI: "s3://test/input/01jq0000000000000000000001", InputOrder: true,
		Deadline: now.Add(time.Hour), Redrive: &job.Redrive{StoppedAt: now, Parts: []int{0}},
		Parts: []job.Part{{Index: 0, Name: "p0", Ref: "arn", Status: job.StatusIngesting, RecordCount: len(ids)}}}
	if err := st.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	ins := make([]job.Input, len(ids))
	for i, id := range ids {
		ins[i] = job.Input{ID: id, Prompt: "fact " + id}
	}
	if err := service.WriteInputs(ctx, s.Blobs, j, ins); err != nil {
		t.Fatal(err)
	}
	put := func(id string, ordinal int, path string) {
		t.Helper()
		if err := st.PutRecords(ctx, j.RecordSet(), []job.Record{{JobID: j.ID, ID: id, Ordinal: ordinal, Status: job.RecordSucceeded, Output: "x", Path: path, ExpiresAt: j.ExpiresAt}}); err != nil {
			t.Fatal(err)
		}
	}
	put("r0", 0, job.PathBatch)
	put("r2", 2, job.PathBatch)
	input := func() string { return localdeps.Read(t, blobs, j.InputURI+"/redrive/records.jsonl") }

	stale := *j // the second ingest's snapshot, taken before the re-drive started
	if ok, err := s.startRedrive(ctx, j, ingest.Result{}); !ok || err != nil {
		t.Fatalf("first set-up: %v, %v", ok, err)
	}
	first := input()
	put("r1", 1, job.PathOnDemand) // the run's first result
	if ok, err := s.startRedrive(ctx, &stale, ingest.Result{}); !ok || err != nil {
		t.Fatalf("stale set-up: %v, %v", ok, err)
	}
	if again := input(); again != first {
		t.Fatalf("the running re-drive's input was rewritten:\n%s\nwas\n%s", again, first)
	}
	if cur, _ := st.GetJob(ctx, j.ID); cur.Redrive.Records != 4 || runs.n != 1 {
		t.Fatalf("re-drive %+v after %d run requests, want 4 records and one request", cur.Redrive, runs.n)
	}
}
