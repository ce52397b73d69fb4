package local_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

const (
	titan  = "amazon.titan-embed-text-v2:0"
	cohere = "cohere.embed-english-v3"
)

// docs are n texts, each with three words of its own and a few shared ones,
// so a query made of one document's own words has that document nearest.
func docs(n int) []map[string]any {
	topics := []string{"harbour", "orchard", "glacier"}
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{
			"id":       fmt.Sprintf("doc-%03d", i),
			"text":     fmt.Sprintf("Report %s about ferns%d lanterns%d copper%d and the weekly review", topics[i%3], i, i, i),
			"metadata": map[string]any{"topic": topics[i%3], "n": i},
		}
	}
	return out
}

var _ = flow("EmbedIndexSearch", func(t *testing.T, w wiring) {
	// On DynamoDB the job reads back with no index: no vector is written (list_indexes says 0).
	s := newSuiteOn(t, w, local.Options{})
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{
		"model": titan, "records": docs(150), "dimensions": 512, "index": map[string]any{"name": "docs"},
	})
	if h.Provider != "bedrock" || h.RecordCount != 150 {
		t.Fatalf("submit = %+v", h)
	}
	s.settle()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "completed" || j.Succeeded != 150 || j.InputTokens == 0 || j.CostUSD <= 0 {
		t.Fatalf("job = %+v, want completed with tokens and cost", j)
	}
	res := call[mcpserver.ResultsOut](t, cs, "get_job_results", map[string]any{"job_id": h.JobID, "limit": 2})
	if len(res.Records) != 2 || res.Records[0].Dimensions != 512 || res.Records[0].Vector != nil || res.Records[0].Output != "" {
		t.Fatalf("results = %+v, want dimensions 512 without vectors", res.Records)
	}
	res = call[mcpserver.ResultsOut](t, cs, "get_job_results", map[string]any{"job_id": h.JobID, "limit": 1, "include_vectors": true})
	if len(res.Records[0].Vector) != 512 {
		t.Fatalf("include_vectors: vector of %d", len(res.Records[0].Vector))
	}

	ls := call[mcpserver.ListIndexesOut](t, cs, "list_indexes", map[string]any{})
	if len(ls.Indexes) != 1 || ls.Indexes[0].Name != "docs" || ls.Indexes[0].Vectors != 150 || ls.Indexes[0].Dimension != 512 ||
		ls.Indexes[0].Model != titan || ls.Indexes[0].Metric != "cosine" || len(ls.Indexes[0].CompletedJobs) != 1 {
		t.Fatalf("list_indexes = %+v", ls)
	}

	for _, want := range []int{7, 42, 149} {
		out := call[mcpserver.SearchOut](t, cs, "search_index", map[string]any{
			"index": "docs", "query": fmt.Sprintf("ferns%d lanterns%d copper%d", want, want, want), "k": 5})
		if len(out.Matches) != 5 || out.Matches[0].ID != fmt.Sprintf("doc-%03d", want) {
			t.Fatalf("search for doc %d: %+v", want, out.Matches)
		}
		if !strings.Contains(out.Matches[0].Text, fmt.Sprintf("ferns%d ", want)) || out.Matches[0].Metadata["topic"] == nil {
			t.Errorf("match carries text %q metadata %v", out.Matches[0].Text, out.Matches[0].Metadata)
		}
		if out.Matches[0].Score <= out.Matches[1].Score {
			t.Errorf("scores not descending: %+v", out.Matches[:2])
		}
	}
	out := call[mcpserver.SearchOut](t, cs, "search_index", map[string]any{
		"index": "docs", "query": "weekly review", "k": 100, "filter": map[string]any{"topic": "orchard"}})
	if len(out.Matches) != 50 {
		t.Fatalf("filter topic=orchard: %d matches, want 50", len(out.Matches))
	}
	for _, m := range out.Matches {
		if m.Metadata["topic"] != "orchard" {
			t.Fatalf("filter let through %+v", m)
		}
	}
})

func TestEmbedCohereOnDemand(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{
		"model": cohere, "records": docs(30), "index": map[string]any{"name": "small", "metric": "euclidean"},
	})
	s.settle()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "completed" || j.Mode != "on_demand" || j.Succeeded != 30 || j.InputTokens == 0 || j.CostUSD <= 0 {
		t.Fatalf("job = %+v", j)
	}
	out := call[mcpserver.SearchOut](t, cs, "search_index", map[string]any{"index": "small", "query": "ferns12 lanterns12 copper12"})
	if len(out.Matches) != 10 || out.Matches[0].ID != "doc-012" || len(out.CompletedJobs) != 1 {
		t.Fatalf("search = %+v", out)
	}
}

func TestEmbedPartialJobNotCommitted(t *testing.T) {
	s := newSuite(t) // every 10th record fails
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": docs(120), "index": map[string]any{"name": "part"}})
	s.settle()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "partially_completed" {
		t.Fatalf("job = %+v", j)
	}
	ls := call[mcpserver.ListIndexesOut](t, cs, "list_indexes", map[string]any{})
	if len(ls.Indexes) != 1 || ls.Indexes[0].Vectors != int64(j.Succeeded) || len(ls.Indexes[0].CompletedJobs) != 0 {
		t.Fatalf("list_indexes = %+v, want %d vectors and no completed job", ls, j.Succeeded)
	}
	res, err := cs.CallTool(context.Background(), callParams("search_index", map[string]any{"index": "part", "query": "ferns1"}))
	if err != nil || res.IsError || !strings.Contains(text(res), "may be partial") {
		t.Fatalf("search over an uncommitted index: %v %s", err, text(res))
	}
}

func TestEmbedBadInput(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": docs(5), "index": map[string]any{"name": "fixed"}})
	s.settle()
	one := func(text string) []map[string]any { return []map[string]any{{"id": "a", "text": text}} }
	long := strings.Repeat("word ", 10001) // 50,005 characters: over Titan's 50,000
	tests := []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"empty text", "submit_batch", map[string]any{"model": titan, "records": one("  ")}, "records[0].text: empty"},
		{"text over the limit", "submit_batch", map[string]any{"model": titan, "records": one(long)}, "input limit of 8192 tokens, 50000 characters"},
		{"dimension not offered", "submit_batch", map[string]any{"model": titan, "records": one("x"), "dimensions": 300}, "dimensions: model amazon.titan-embed-text-v2:0 offers 256, 512, 1024"},
		{"cohere dimension", "submit_batch", map[string]any{"model": cohere, "records": one("x"), "dimensions": 512}, "offers 1024"},
		{"bad truncate", "submit_batch", map[string]any{"model": cohere, "records": one("x"), "truncate": "MIDDLE"}, "truncate: must be NONE"},
		{"input_type on titan", "submit_batch", map[string]any{"model": titan, "records": one("x"), "input_type": "search_query"}, "input_type"},
		{"index dimension differs", "submit_batch", map[string]any{"model": titan, "records": one("x"), "dimensions": 256, "index": map[string]any{"name": "fixed"}}, "dimension 1024"},
		{"index model differs", "submit_batch", map[string]any{"model": cohere, "records": one("x"), "index": map[string]any{"name": "fixed"}}, "model amazon.titan-embed-text-v2:0"},
		{"index metric differs", "submit_batch", map[string]any{"model": titan, "records": one("x"), "index": map[string]any{"name": "fixed", "metric": "euclidean"}}, "metric cosine"},
		{"index on a text model", "submit_batch", map[string]any{"model": haiku, "records": records(1), "index": map[string]any{"name": "x"}}, "only embedding models"},
		{"text on a text model", "submit_batch", map[string]any{"model": haiku, "records": one("x")}, "text is for embedding models"},
		{"prompt on an embedding model", "submit_batch", map[string]any{"model": titan, "records": records(1)}, "embedding model: give text"},
		{"reserved metadata key", "submit_batch", map[string]any{"model": titan, "records": []map[string]any{{"text": "x", "metadata": map[string]any{"text": "y"}}}, "index": map[string]any{"name": "fixed"}}, "metadata.text: reserved"},
		{"k over 100", "search_index", map[string]any{"index": "fixed", "query": "x", "k": 101}, "k: 101 is outside 1..100"},
		{"filter on an unknown key", "search_index", map[string]any{"index": "fixed", "query": "x", "filter": map[string]any{"colour": "red"}}, "colour"},
		{"empty query", "search_index", map[string]any{"index": "fixed", "query": ""}, "query: empty"},
		{"unknown index", "search_index", map[string]any{"index": "nope", "query": "x"}, "index not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if msg := toolErr(t, cs, tc.tool, tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("error %q, want it to contain %q", msg, tc.want)
			}
		})
	}
	// A refused submit left nothing in the index.
	ls := call[mcpserver.ListIndexesOut](t, cs, "list_indexes", map[string]any{})
	if len(ls.Indexes) != 1 || ls.Indexes[0].Vectors != 5 {
		t.Fatalf("list_indexes = %+v", ls)
	}
	// truncate END cuts the text instead.
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": one(long), "truncate": "END"})
	s.settle()
	if j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID}); j.Status != "completed" {
		t.Fatalf("truncated job = %+v", j)
	}
}

func TestIndexOwnerIsolation(t *testing.T) {
	s := newCleanSuite(t)
	alice, bob := s.client("alice"), s.client("bob")
	call[mcpserver.JobHandle](t, alice, "submit_batch", map[string]any{"model": titan, "records": docs(5), "index": map[string]any{"name": "mine"}})
	s.settle()
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"search_index", map[string]any{"index": "mine", "query": "ferns1"}},
	} {
		if msg := toolErr(t, bob, tc.tool, tc.args); !strings.Contains(msg, "index not found") {
			t.Errorf("bob %s: %q", tc.tool, msg)
		}
	}
	if d := call[mcpserver.DeleteIndexOut](t, bob, "delete_index", map[string]any{"index": "mine"}); d.Deleted {
		t.Errorf("bob deleted alice's index: %+v", d)
	}
	if ls := call[mcpserver.ListIndexesOut](t, bob, "list_indexes", map[string]any{}); len(ls.Indexes) != 0 {
		t.Errorf("bob lists %+v", ls.Indexes)
	}
	// Bob's own index of the same name is another index.
	call[mcpserver.JobHandle](t, bob, "submit_batch", map[string]any{"model": cohere, "records": docs(3), "index": map[string]any{"name": "mine"}})
	s.settle()
	if ls := call[mcpserver.ListIndexesOut](t, alice, "list_indexes", map[string]any{}); len(ls.Indexes) != 1 || ls.Indexes[0].Model != titan || ls.Indexes[0].Vectors != 5 {
		t.Errorf("alice lists %+v", ls.Indexes)
	}
	d := call[mcpserver.DeleteIndexOut](t, alice, "delete_index", map[string]any{"index": "mine"})
	if !d.Deleted {
		t.Fatal(d)
	}
	if msg := toolErr(t, alice, "search_index", map[string]any{"index": "mine", "query": "x"}); !strings.Contains(msg, "index not found") {
		t.Errorf("after delete: %q", msg)
	}
	if ls := call[mcpserver.ListIndexesOut](t, bob, "list_indexes", map[string]any{}); len(ls.Indexes) != 1 || ls.Indexes[0].Vectors != 3 {
		t.Errorf("bob's index after alice's delete: %+v", ls.Indexes)
	}
}

func callParams(tool string, args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: args}
}

// TestDeleteIndexIdempotent: delete_index is annotated idempotent, so a
// second call (a client retrying after a lost answer) succeeds and says
// there was nothing left to delete; another owner's call deletes nothing.
func TestDeleteIndexIdempotent(t *testing.T) {
	s := newCleanSuite(t)
	alice, bob := s.client("alice"), s.client("bob")
	call[mcpserver.JobHandle](t, alice, "submit_batch", map[string]any{"model": titan, "records": docs(5), "index": map[string]any{"name": "twice"}})
	s.settle()
	if d := call[mcpserver.DeleteIndexOut](t, bob, "delete_index", map[string]any{"index": "twice"}); d.Deleted {
		t.Fatalf("bob deleted alice's index: %+v", d)
	}
	if ls := call[mcpserver.ListIndexesOut](t, alice, "list_indexes", map[string]any{}); len(ls.Indexes) != 1 {
		t.Fatalf("alice's index after bob's delete_index: %+v", ls.Indexes)
	}
	if d := call[mcpserver.DeleteIndexOut](t, alice, "delete_index", map[string]any{"index": "twice"}); !d.Deleted {
		t.Fatalf("first delete: %+v", d)
	}
	if d := call[mcpserver.DeleteIndexOut](t, alice, "delete_index", map[string]any{"index": "twice"}); d.Deleted || d.Index != "twice" {
		t.Fatalf("second delete: %+v, want success with deleted false", d)
	}
}

// Cohere Embed takes up to 96 texts a call: 200 texts on demand are 3 calls
// (96 + 96 + 8), each record still gets its own vector and its share of the
// billed tokens, and the index built from them answers searches.
func TestEmbedCohere96PerCall(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	before := s.l.Reports.Runtime.Stats().Calls
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{
		"model": cohere, "records": docs(200), "index": map[string]any{"name": "many"},
	})
	s.settle()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Status != "completed" || j.Mode != "on_demand" || j.Succeeded != 200 || j.InputTokens == 0 {
		t.Fatalf("job = %+v", j)
	}
	if calls := s.l.Reports.Runtime.Stats().Calls - before; calls != 3 {
		t.Errorf("%d InvokeModel calls for 200 texts, want 3 (at most 96 texts a call)", calls)
	}
	out := call[mcpserver.SearchOut](t, cs, "search_index", map[string]any{"index": "many", "query": "ferns150 lanterns150 copper150"})
	if len(out.Matches) == 0 || out.Matches[0].ID != "doc-150" {
		t.Fatalf("search = %+v", out)
	}
}

// Cohere Embed v4 and Nova Multimodal Embeddings with their dimension
// choices, on demand through their native bodies.
func TestEmbedNewModels(t *testing.T) {
	for _, tc := range []struct {
		model string
		dims  int
	}{
		{"cohere.embed-v4:0", 256},
		{"cohere.embed-v4:0", 1536},
		{"amazon.nova-2-multimodal-embeddings-v1:0", 384},
		{"amazon.nova-2-multimodal-embeddings-v1:0", 3072},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.model, tc.dims), func(t *testing.T) {
			s := newCleanSuite(t)
			cs := s.client("alice")
			name := fmt.Sprintf("idx%d", tc.dims)
			h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{
				"model": tc.model, "records": docs(20), "dimensions": tc.dims, "index": map[string]any{"name": name},
			})
			s.settle()
			j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
			if j.Status != "completed" || j.Succeeded != 20 {
				t.Fatalf("job = %+v", j)
			}
			out := call[mcpserver.SearchOut](t, cs, "search_index", map[string]any{"index": name, "query": "ferns7 lanterns7 copper7"})
			if len(out.Matches) == 0 || out.Matches[0].ID != "doc-007" {
				t.Fatalf("search = %+v", out)
			}
		})
	}
}

// TestEmbedIndexDeletedDuringJob: an index deleted while its embedding job
// ran can never take the job's vectors; the job ends (not left ingesting)
// with the reason, its results kept.
func TestEmbedIndexDeletedDuringJob(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": docs(120), "index": map[string]any{"name": "gone"}})
	call[map[string]any](t, cs, "delete_index", map[string]any{"index": "gone"})
	s.settle()
	s.settle()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if !j.Terminal || j.Status == "completed" || !strings.Contains(j.Error, `index "gone"`) || j.Succeeded != 120 {
		t.Fatalf("job = %+v; want it ended, not completed, naming the index", j)
	}
	if res := call[mcpserver.ResultsOut](t, cs, "get_job_results", map[string]any{"job_id": h.JobID, "limit": 1}); len(res.Records) != 1 {
		t.Fatalf("results of the job are gone: %+v", res)
	}
}

// TestEmbedRetryWritesIndex: retry_failed of an embedding job writes the
// retried records' vectors into the job's index.
func TestEmbedRetryWritesIndex(t *testing.T) {
	s := newSuite(t) // every 10th record fails
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": docs(120), "index": map[string]any{"name": "again"}})
	s.settle()
	j := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": h.JobID})
	if j.Failed == 0 {
		t.Fatalf("job = %+v, want failed records", j)
	}
	r := call[mcpserver.RetryOut](t, cs, "retry_failed", map[string]any{"job_id": h.JobID})
	s.settle()
	c := call[mcpserver.JobView](t, cs, "get_job", map[string]any{"job_id": r.JobID})
	if !c.Terminal || c.Succeeded == 0 {
		t.Fatalf("retry = %+v", c)
	}
	ls := call[mcpserver.ListIndexesOut](t, cs, "list_indexes", map[string]any{})
	if len(ls.Indexes) != 1 || ls.Indexes[0].Vectors != int64(j.Succeeded+c.Succeeded) {
		t.Fatalf("list_indexes = %+v, want %d+%d vectors", ls, j.Succeeded, c.Succeeded)
	}
}

func TestSearchEmbedsQueryAsIndexWasEmbedded(t *testing.T) {
	// An index of unnormalised Titan vectors, ranked by L2 distance: a query
	// equal to a document's text lands on that vector (distance 0) only when
	// it too is embedded with normalize false, as the index records.
	s := newCleanSuite(t)
	cs := s.client("alice")
	d := docs(20)
	call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{
		"model": titan, "records": d, "dimensions": 256, "normalize": false,
		"index": map[string]any{"name": "raw", "metric": "euclidean"},
	})
	s.settle()
	out := call[mcpserver.SearchOut](t, cs, "search_index", map[string]any{"index": "raw", "query": d[7]["text"], "k": 2})
	if len(out.Matches) != 2 || out.Matches[0].ID != "doc-007" {
		t.Fatalf("search = %+v", out.Matches)
	}
	if out.Matches[0].Distance > 1e-4 {
		t.Fatalf("distance to the identical text %g, want 0: the query was not embedded with normalize false", out.Matches[0].Distance)
	}
}
