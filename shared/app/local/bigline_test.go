package local_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// Bedrock's output line repeats the record's input: a 5 MiB input line makes
// an output line over the default 4 MiB line cap, and its result must still
// be read, not counted as a bad line.
func TestFiveMiBInputLineGetsAResult(t *testing.T) {
	s := newSuite(t)
	s.l.Sim.FailEvery = 0
	recs := make([]job.Input, 100)
	for i := range recs {
		recs[i] = job.Input{ID: fmt.Sprintf("q%03d", i), Prompt: fmt.Sprintf("fact %d", i)}
	}
	recs[7].Prompt = strings.Repeat("long context ", 5<<20/13+1)
	ctx := context.Background()
	j, err := s.l.Service.Batch.Submit(ctx, batch.SubmitRequest{Owner: "alice", Model: haiku, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	s.settle()
	got, err := s.l.Service.Queries.Get(ctx, "alice", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.BadLines != 0 || got.Succeeded+got.Failed != 100 {
		t.Fatalf("job = %s with %d succeeded, %d failed, %d bad lines (%s); want 100 results and no bad line",
			got.Status, got.Succeeded, got.Failed, got.BadLines, got.Error)
	}
}
