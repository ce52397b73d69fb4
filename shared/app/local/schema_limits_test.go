package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// setPath sets v at path (mcpserver.Limit's form) in args, making the
// objects on the way and using an array's first item; it returns the field
// as the validation names it ("records[0].id").
func setPath(args map[string]any, path string, v any) string {
	var field []string
	cur := args
	parts := strings.Split(path, ".")
	for i, part := range parts {
		name := strings.TrimSuffix(part, "[]")
		isArray := name != part
		last := i == len(parts)-1
		switch {
		case last && !isArray:
			cur[name] = v
		case last:
			// An array of scalars (categories[]): v is its first item.
			cur[name] = []any{v}
			name += "[0]"
		case isArray:
			items, _ := cur[name].([]map[string]any)
			if len(items) == 0 {
				items = []map[string]any{{}}
				cur[name] = items
			}
			cur = items[0]
			name += "[0]"
		default:
			next, _ := cur[name].(map[string]any)
			if next == nil {
				next = map[string]any{}
				cur[name] = next
			}
			cur = next
		}
		field = append(field, name)
	}
	return strings.Join(field, ".")
}

// refused is the first value past lim that its validation must refuse, and
// the number the refusal must name ("" when it names a value list).
func refused(lim mcpserver.Limit) (any, string) {
	switch {
	case lim.Enum != nil:
		return "not-" + lim.Enum[0], ""
	case lim.Maximum != nil:
		return *lim.Maximum + 1, strconv.FormatFloat(*lim.Maximum, 'f', -1, 64)
	case lim.Minimum != nil:
		below := *lim.Minimum - 1
		if below == 0 {
			below = -1 // 0 in an integer field is the field omitted (its default)
		}
		return below, ""
	case lim.MaxLength != nil:
		n := *lim.MaxLength + 1
		v := strings.Repeat("a", n)
		switch {
		case strings.HasSuffix(lim.Path, "_uri"):
			v = "s3://" + strings.Repeat("a", n-len("s3://"))
		case strings.HasSuffix(lim.Path, "webhook"):
			v = "https://example.com/" + strings.Repeat("a", n-len("https://example.com/"))
		}
		return v, strconv.Itoa(*lim.MaxLength)
	case lim.MaxItems != nil:
		ids := make([]string, *lim.MaxItems+1)
		for i := range ids {
			ids[i] = fmt.Sprintf("r%d", i)
		}
		return ids, strconv.Itoa(*lim.MaxItems)
	}
	return nil, ""
}

// TestInputLimitsAreValidated holds every limit the tools' listed schemas
// state to the validation: the listed schema of the tool carries it, and the
// first value past it, sent through the tool, is refused by a tool error
// that names the field (and the limit's number). A limit the schema states
// but nothing enforces, or one whose constant the validation does not use,
// fails here.
func TestInputLimitsAreValidated(t *testing.T) {
	t.Setenv("MCPBATCH_SAGEMAKER_OPERATORS", "alice") // shift_traffic reaches its weights
	s := newSuite(t)                                  // every 10th record fails: a finished job has failed records
	cs := s.client("alice")
	done := s.finishedJob(cs, 150)
	call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": docs(150), "index": map[string]any{"name": "docs"}})
	s.settle()
	tools := servedTools(t, cs)

	// Valid arguments of each tool, into which one value past a limit goes.
	base := map[string]func() map[string]any{
		"submit_batch":      func() map[string]any { return map[string]any{"model": haiku, "records": records(100)} },
		"get_job_results":   func() map[string]any { return map[string]any{"job_id": done} },
		"list_jobs":         func() map[string]any { return map[string]any{} },
		"export_results":    func() map[string]any { return map[string]any{"job_id": done} },
		"summarize_results": func() map[string]any { return map[string]any{"job_id": done} },
		"retry_failed":      func() map[string]any { return map[string]any{"job_id": done} },
		"invoke_endpoint_async": func() map[string]any {
			return map[string]any{"endpoint_name": "demo-async", "body": "ping", "content_type": "text/plain"}
		},
		"shift_traffic": func() map[string]any {
			return map[string]any{"endpoint_name": "demo-canary", "weights": []map[string]any{{"variant": "canary"}}}
		},
		"search_index":  func() map[string]any { return map[string]any{"index": "docs", "query": "ferns7 lanterns7"} },
		"list_reports":  func() map[string]any { return map[string]any{} },
		"delete_index":  func() map[string]any { return map[string]any{} },
		"create_upload": func() map[string]any { return map[string]any{} },
	}
	// What else a limit needs to be reached: the model it applies to, the
	// record shape, or the other field that takes it.
	prepare := map[string]func(args map[string]any){
		"submit_batch.input_type": func(a map[string]any) { a["model"], a["records"] = cohere, docs(100) },
		"submit_batch.truncate":   func(a map[string]any) { a["model"], a["records"] = titan, docs(100) },
		"submit_batch.index.name": func(a map[string]any) { a["model"], a["records"] = titan, docs(100) },
		"submit_batch.index.metric": func(a map[string]any) {
			a["model"], a["records"], a["index"] = titan, docs(100), map[string]any{"name": "docs"}
		},
		"submit_batch.records[].id": func(a map[string]any) { a["records"] = records(100) },
		"submit_batch.records[].messages[].role": func(a map[string]any) {
			recs := records(100)
			recs[0] = map[string]any{"id": "m0", "messages": []map[string]any{{"content": "hello"}}}
			a["records"] = recs
		},
		"submit_batch.input_upload_ids":   func(a map[string]any) { delete(a, "records") },
		"retry_failed.record_ids":         func(a map[string]any) { a["which"] = "ids" },
		"invoke_endpoint_async.input_uri": func(a map[string]any) { delete(a, "body") },
	}

	limits := mcpserver.InputLimits()
	if len(limits) < 30 {
		t.Fatalf("%d limits", len(limits))
	}
	for _, lim := range limits {
		t.Run(lim.Tool+"."+lim.Path, func(t *testing.T) {
			tl := tools[lim.Tool]
			if tl == nil {
				t.Fatalf("%s is not served", lim.Tool)
			}
			raw, _ := json.Marshal(tl.InputSchema)
			var listed jsonschema.Schema
			if err := json.Unmarshal(raw, &listed); err != nil {
				t.Fatal(err)
			}
			p, err := mcpserver.Property(&listed, lim.Path)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(p.Enum) != fmt.Sprint(anySlice(lim.Enum)) || !samePtr(p.Minimum, lim.Minimum) || !samePtr(p.Maximum, lim.Maximum) ||
				!samePtr(p.MaxLength, lim.MaxLength) || !samePtr(p.MaxItems, lim.MaxItems) {
				t.Errorf("listed schema at %s: enum %v minimum %v maximum %v maxLength %v maxItems %v; want %+v",
					lim.Path, p.Enum, p.Minimum, p.Maximum, p.MaxLength, p.MaxItems, lim)
			}

			mk := base[lim.Tool]
			if mk == nil {
				t.Fatalf("no valid arguments for %s in this test", lim.Tool)
			}
			args := mk()
			if f := prepare[lim.Tool+"."+lim.Path]; f != nil {
				f(args)
			}
			v, number := refused(lim)
			field := setPath(args, lim.Path, v)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: lim.Tool, Arguments: args})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			msg := text(res)
			if !res.IsError {
				t.Fatalf("%s = %.80v was not refused: %.200s", field, v, msg)
			}
			if !strings.Contains(msg, field) || !strings.Contains(msg, number) {
				t.Errorf("%s = %.80v: refusal %.300q does not name %s and %q", field, v, msg, field, number)
			}
			if strings.Contains(msg, "validating \"arguments\"") {
				t.Errorf("refused by the SDK's schema check, not the validation: %.300s", msg)
			}
		})
	}
}

func anySlice(s []string) []any {
	var out []any
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

func samePtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// ptrOr is *p, or "none".
func ptrOr[T any](p *T) any {
	if p == nil {
		return "none"
	}
	return *p
}
