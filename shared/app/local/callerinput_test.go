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

// A native or Converse model_input may point at S3 (an s3Location's uri, an
// s3Uri): Bedrock reads it with the batch or on-demand role, which reads the
// whole input/ folder, so such a reference is held to the caller's own input
// folders as input_uri is, inline and in a file alike.
func TestModelInputS3RefsOnlyFromTheCallersOwnFolders(t *testing.T) {
	s := newSuite(t)
	ctx := context.Background()
	bob := s.client("bob")
	alices := local.Bucket + "/uploads/" + service.OwnerTag("alice") + "/01abcdefghjkmnpqrstvwxyz01.png"
	jobInput := local.Bucket + "/input/01abcdefghjkmnpqrstvwxyz0/part-1/records.jsonl"
	bobs := local.Bucket + "/inputs/" + service.OwnerTag("bob") + "/cat.png"
	converse := func(uri string) string {
		return `{"messages":[{"role":"user","content":[{"text":"what is it?"},{"image":{"format":"png","source":{"s3Location":{"uri":"` + uri + `"}}}}]}],"inferenceConfig":{"maxTokens":64}}`
	}
	nova := func(uri string) string {
		return `{"schemaVersion":"messages-v1","messages":[{"role":"user","content":[{"video":{"format":"mp4","source":{"s3Location":{"uri":"` + uri + `"}}}},{"text":"what is it?"}]}],"inferenceConfig":{"maxTokens":64}}`
	}
	embed := func(uri string) string {
		return `{"taskType":"SINGLE_EMBEDDING","singleEmbeddingParams":{"embeddingPurpose":"GENERIC_INDEX","image":{"format":"png","source":{"s3Uri":"` + uri + `"}}}}`
	}
	for _, c := range []struct {
		name, model string
		body        func(string) string
		field       string
	}{
		{"converse", sonnet45, converse, "records[3].model_input.messages[0].content[1].image.source.s3Location.uri"},
		{"nova native", "amazon.nova-lite-v1:0", nova, "records[3].model_input.messages[0].content[0].video.source.s3Location.uri"},
		{"s3Uri", "amazon.nova-lite-v1:0", embed, "records[3].model_input.singleEmbeddingParams.image.source.s3Uri"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, uri := range []string{alices, jobInput, "s3://another-bucket/cat.png"} {
				recs := make([]map[string]any, 100)
				for i := range recs {
					recs[i] = map[string]any{"model_input": rawJSON(c.body(bobs))}
				}
				recs[3] = map[string]any{"model_input": rawJSON(c.body(uri))}
				msg := toolErr(t, bob, "submit_batch", map[string]any{"model": c.model, "records": recs, "dry_run": true})
				if !strings.Contains(msg, c.field+": must lie in your own input folders") {
					t.Errorf("model_input pointing at %s: %q, want a refusal naming %s", uri, msg, c.field)
				}
			}
		})
	}
	// In a file: the line is named.
	file := local.Bucket + "/inputs/" + service.OwnerTag("bob") + "/batch.jsonl"
	body := jsonlLines(120, func(i int) string {
		if i == 7 {
			return `{"model_input":` + converse(alices) + `}`
		}
		return `{"model_input":` + converse(bobs) + `}`
	})
	if _, err := s.l.Service.Core.Blobs.Put(ctx, file, strings.NewReader(body), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	h := submitFile(t, bob, map[string]any{"model": sonnet45, "input_uri": file})
	j := validated(t, s, bob, h.JobID)
	if j.Status != "failed" || !strings.Contains(j.Error, "line 8") || !strings.Contains(j.Error, "s3Location.uri: must lie in your own input folders") {
		t.Errorf("file job %s: %q, want it failed naming line 8's s3Location", j.Status, j.Error)
	}
}
