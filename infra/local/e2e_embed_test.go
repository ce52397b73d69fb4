package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestInspectorEmbeddings is the embeddings path as a user drives it with the
// real MCP Inspector CLI against `make dev`: 150 documents embedded by a
// Titan batch job into an index (S3 Vectors simulator behind the real SDK
// client), then search_index finds the document a query describes first.
func TestInspectorEmbeddings(t *testing.T) {
	inspector(t)
	url := startDev(t, "-sim-step", "1s", "-sim-fail-every", "0")

	topics := []string{"harbour", "orchard", "glacier", "desert", "forest"}
	recs := make([]map[string]any, 150)
	for i := range recs {
		recs[i] = map[string]any{
			"id":       fmt.Sprintf("doc-%03d", i),
			"text":     fmt.Sprintf("Field note %d from the %s: lichen%d sparrows%d basalt%d and the weekly survey", i, topics[i%5], i, i, i),
			"metadata": map[string]any{"topic": topics[i%5]},
		}
	}
	h := structured(t, callTool(t, url, "submit_batch", map[string]any{
		"model": "amazon.titan-embed-text-v2:0", "records": recs, "dimensions": 512, "index": map[string]any{"name": "notes"},
	}))
	jobID, _ := h["job_id"].(string)
	if jobID == "" || h["record_count"].(float64) != 150 {
		t.Fatalf("handle = %v", h)
	}
	var job map[string]any
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		job = structured(t, callTool(t, url, "get_job", map[string]any{"job_id": jobID}))
		if job["terminal"] == true {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job never finished: %v", job)
		}
	}
	if job["status"] != "completed" || job["mode"] != "batch" || job["succeeded"].(float64) != 150 || job["input_tokens"].(float64) == 0 {
		t.Fatalf("job = %v", job)
	}

	idx := structured(t, callTool(t, url, "list_indexes", map[string]any{}))
	list, _ := idx["indexes"].([]any)
	if len(list) != 1 {
		t.Fatalf("list_indexes = %v", idx)
	}
	ix := list[0].(map[string]any)
	if ix["name"] != "notes" || ix["vector_count"].(float64) != 150 || ix["dimension"].(float64) != 512 || len(ix["completed_jobs"].([]any)) != 1 {
		t.Fatalf("index = %v", ix)
	}

	res := structured(t, callTool(t, url, "search_index", map[string]any{"index": "notes", "query": "lichen87 sparrows87 basalt87", "k": 5}))
	matches, _ := res["matches"].([]any)
	if len(matches) != 5 {
		t.Fatalf("search = %v", res)
	}
	first := matches[0].(map[string]any)
	if first["id"] != "doc-087" || !strings.Contains(first["text"].(string), "lichen87") {
		t.Fatalf("nearest = %v, want doc-087", first)
	}

	filtered := structured(t, callTool(t, url, "search_index", map[string]any{
		"index": "notes", "query": "weekly survey", "k": 100, "filter": map[string]any{"topic": "desert"}}))
	if fm, _ := filtered["matches"].([]any); len(fm) != 30 {
		t.Fatalf("filter topic=desert: %d matches, want 30", len(fm))
	}

	for _, bad := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"index": "notes", "query": "x", "k": 101}, "k: 101 is outside 1..100"},
		{map[string]any{"index": "notes", "query": "x", "filter": map[string]any{"colour": "red"}}, "colour"},
	} {
		out := callTool(t, url, "search_index", bad.args)
		if isErr, _ := out["isError"].(bool); !isErr || !strings.Contains(toText(out), bad.want) {
			t.Errorf("search_index %v = %v, want an error naming %q", bad.args, out, bad.want)
		}
	}
	out := callTool(t, url, "submit_batch", map[string]any{"model": "amazon.titan-embed-text-v2:0", "records": recs[:3], "dimensions": 256, "index": map[string]any{"name": "notes"}})
	if isErr, _ := out["isError"].(bool); !isErr || !strings.Contains(toText(out), "dimension 512") {
		t.Errorf("submit with another dimension into the index = %v", out)
	}
}
