package local_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// An input_uri must lie in the caller's own folders (or an operator's
// allow-list): another caller's upload, the shared inputs/ folder or another
// bucket are refused — for batch submits and SageMaker async alike — with an
// answer that does not say whether the object exists.
func TestInputURIOnlyFromTheCallersOwnFolders(t *testing.T) {
	s := newSuite(t)
	ctx := context.Background()
	alice, bob := s.client("alice"), s.client("bob")
	body := jsonlLines(120, func(i int) string { return `{"prompt":"hi"}` })
	put := func(uri string) {
		if _, err := s.l.Service.Core.Blobs.Put(ctx, uri, strings.NewReader(body), "application/jsonl"); err != nil {
			t.Fatal(err)
		}
	}
	aliceUpload := local.Bucket + "/uploads/" + service.OwnerTag("alice") + "/01abcdefghjkmnpqrstvwxyz01.jsonl"
	shared := local.Bucket + "/inputs/shared.jsonl"
	bobOwn := local.Bucket + "/inputs/" + service.OwnerTag("bob") + "/batch.jsonl"
	put(aliceUpload)
	put(shared)
	put(bobOwn)
	missingInAlices := local.Bucket + "/uploads/" + service.OwnerTag("alice") + "/nothing-here.jsonl"

	refusal := func(uri string) string {
		msg := toolErr(t, bob, "submit_batch", map[string]any{"model": haiku, "input_uri": uri})
		if !strings.Contains(msg, "input_uri: must lie in your own input folders") {
			t.Errorf("bob's input_uri %s: %q, want a refusal naming his folders", uri, msg)
		}
		return strings.ReplaceAll(msg, uri, "<uri>")
	}
	existing, missing := refusal(aliceUpload), refusal(missingInAlices)
	if existing != missing {
		t.Errorf("the refusal tells an existing key from a missing one:\n%s\n%s", existing, missing)
	}
	refusal(shared)
	refusal("s3://another-bucket/inputs/" + service.OwnerTag("bob") + "/batch.jsonl")
	refusal(local.Bucket + "/inputs/" + service.OwnerTag("bob") + "/../shared.jsonl")

	// His own folder is his; alice's own upload is hers.
	if h := submitFile(t, bob, map[string]any{"model": haiku, "input_uri": bobOwn}); h.JobID == "" {
		t.Fatal("bob's own input refused")
	}
	if h := submitFile(t, alice, map[string]any{"model": haiku, "input_uri": aliceUpload}); h.JobID == "" {
		t.Fatal("alice's own upload refused")
	}

	// SageMaker's endpoint reads input_uri with its own role: the same rule.
	for _, uri := range []string{aliceUpload, "s3://another-bucket/secret.json"} {
		msg := toolErr(t, bob, "invoke_endpoint_async", map[string]any{"endpoint_name": "demo-async", "input_uri": uri, "content_type": "application/json"})
		if !strings.Contains(msg, "input_uri: must lie in your own input folders") {
			t.Errorf("invoke_endpoint_async input_uri %s: %q", uri, msg)
		}
	}
}
