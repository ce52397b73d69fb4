package local_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/service/reconcile"
)

// The READMEs that describe the tools: the reference beside the server, and
// the newcomer's page at the top of the repo.
const (
	toolReadme = "../../mcpserver/README.md"
	rootReadme = "../../../README.md"
)

// otherReadmes may name tool inputs too (budget_usd in infra's, notify in notify's).
var otherReadmes = []string{"../../../infra/README.md", "../../../infra/local/README.md", "../../notify/README.md",
	"../../index/README.md", "../../content/README.md", "../../model/README.md", "../../metrics/README.md"}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// servedTools lists the tools the local suite (every tool set on) serves.
func servedTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// docField is one field a README names: `name` or `name?` (optional).
type docField struct {
	name     string
	optional bool
}

var identRe = regexp.MustCompile(`^[a-z][a-z0-9_]*\??$`)

// topLevelFields reads the field names of a README cell such as
// "`job_id, status? (all\|failed), limit? (1..500, default 100)`": what is
// inside parentheses, brackets and braces is a comment or a nested shape,
// not a field of this level.
func topLevelFields(cell string) []docField {
	cell = strings.NewReplacer("`", "", `\|`, ",", "|", ",", ":", " ", `"`, "").Replace(cell)
	var flat strings.Builder
	depth := 0
	for _, r := range cell {
		switch r {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		default:
			if depth == 0 {
				flat.WriteRune(r)
			}
		}
	}
	var out []docField
	for _, tok := range strings.FieldsFunc(flat.String(), func(r rune) bool { return r == ',' || r == ' ' }) {
		if identRe.MatchString(tok) {
			out = append(out, docField{strings.TrimSuffix(tok, "?"), strings.HasSuffix(tok, "?")})
		}
	}
	return out
}

// toolTable is the reference table of shared/mcpserver/README.md: tool →
// its input and output cells.
func toolTable(t *testing.T, readme string) map[string][2]string {
	t.Helper()
	rows := map[string][2]string{}
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| (.*) \\| (.*) \\|$")
	for _, line := range strings.Split(readme, "\n") {
		line = strings.ReplaceAll(line, `\|`, "\x00")
		if m := row.FindStringSubmatch(line); m != nil {
			rows[m[1]] = [2]string{strings.ReplaceAll(m[2], "\x00", `\|`), strings.ReplaceAll(m[3], "\x00", `\|`)}
		}
	}
	if len(rows) < 10 {
		t.Fatalf("found %d rows of the tool table in %s", len(rows), toolReadme)
	}
	return rows
}

type schemaView struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

func schemaOf(t *testing.T, v any) schemaView {
	t.Helper()
	raw, _ := json.Marshal(v)
	var s schemaView
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("schema %s: %v", raw, err)
	}
	return s
}

// proseSignature finds the tool calls the READMEs spell as
// "`tool {field, field?}`" in their text.
var proseSignature = regexp.MustCompile("`([a-z]+_[a-z_]+) (\\{[^`]*\\})`")

// TestReadmeToolReference checks the tool reference of
// shared/mcpserver/README.md, and the tool lists of both READMEs, against
// the tools the suite serves: every documented tool is served and every
// served tool documented; every input field the table names is in the
// tool's input schema (optional where the table says `?`, and every
// required one documented); every output field in its output schema; and
// every input property the schema has is named somewhere in the README.
func TestReadmeToolReference(t *testing.T) {
	s := newCleanSuite(t)
	tools := servedTools(t, s.client("alice"))
	readme := readFile(t, toolReadme)
	table := toolTable(t, readme)

	documented := map[string]bool{}
	for name := range table {
		documented[name] = true
	}
	for _, m := range proseSignature.FindAllStringSubmatch(readme, -1) {
		documented[m[1]] = true
	}
	for name := range tools {
		if !documented[name] && !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("tool %s is served but %s does not document it", name, toolReadme)
		}
	}
	root := readFile(t, rootReadme)
	allReadmes := readme + root
	for _, path := range otherReadmes {
		allReadmes += readFile(t, path)
	}
	// Every word inside a code span of any README.
	inCode := map[string]bool{}
	fence := regexp.MustCompile("(?s)```.*?```")
	spans := fence.FindAllString(allReadmes, -1)
	spans = append(spans, regexp.MustCompile("`[^`]+`").FindAllString(fence.ReplaceAllString(allReadmes, ""), -1)...)
	for _, span := range spans {
		for _, w := range regexp.MustCompile(`[a-z][a-z0-9_]*`).FindAllString(span, -1) {
			inCode[w] = true
		}
	}
	rootTable := regexp.MustCompile("(?m)^\\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|")
	var rootTools int
	for _, m := range rootTable.FindAllStringSubmatch(root, -1) {
		for _, name := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
			rootTools++
			if tools[name[1]] == nil {
				t.Errorf("README.md lists tool %s, which is not served", name[1])
			}
		}
	}
	if rootTools < 10 {
		t.Errorf("README.md's tool table names %d tools", rootTools)
	}

	for name, cells := range table {
		tl := tools[name]
		if tl == nil {
			t.Errorf("%s: in the tool table but not served", name)
			continue
		}
		in := schemaOf(t, tl.InputSchema)
		inFields := map[string]bool{}
		if strings.TrimSpace(cells[0]) != "—" {
			for _, f := range topLevelFields(cells[0]) {
				inFields[f.name] = true
				if _, ok := in.Properties[f.name]; !ok {
					t.Errorf("%s: the table documents input %q, the schema has %v", name, f.name, slices.Sorted(maps.Keys(in.Properties)))
				}
				if f.optional && slices.Contains(in.Required, f.name) {
					t.Errorf("%s: the table says %q is optional, the schema requires it", name, f.name)
				}
			}
		}
		for _, req := range in.Required {
			if !inFields[req] {
				t.Errorf("%s: input %q is required but the table does not name it", name, req)
			}
		}
		for prop := range in.Properties {
			if !inCode[prop] {
				t.Errorf("%s: input %q is in the schema but no README names it", name, prop)
			}
		}
		if strings.HasPrefix(cells[1], "as `") {
			continue // "as describe_endpoint": the same answer
		}
		if tl.OutputSchema == nil {
			t.Errorf("%s: documents an output but has no output schema", name)
			continue
		}
		out := schemaOf(t, tl.OutputSchema)
		for _, f := range topLevelFields(cells[1]) {
			if _, ok := out.Properties[f.name]; !ok {
				t.Errorf("%s: the table documents output %q, the schema has %v", name, f.name, slices.Sorted(maps.Keys(out.Properties)))
			}
		}
	}

	// "`search_index {index, query, k? ...}`" in the text of every README.
	for _, path := range append([]string{toolReadme, rootReadme}, otherReadmes...) {
		for _, m := range proseSignature.FindAllStringSubmatch(readFile(t, path), -1) {
			tl := tools[m[1]]
			if tl == nil {
				t.Errorf("%s: %s is not a served tool", path, m[0])
				continue
			}
			in := schemaOf(t, tl.InputSchema)
			for _, f := range topLevelFields(m[2][1 : len(m[2])-1]) {
				if _, ok := in.Properties[f.name]; !ok {
					t.Errorf("%s: %s names input %q, the schema has %v", path, m[0], f.name, slices.Sorted(maps.Keys(in.Properties)))
				}
			}
		}
	}
}

// validates checks args against the tool's input schema, as a client that
// validates before calling would.
func validates(t *testing.T, tl *mcp.Tool, args any) error {
	t.Helper()
	raw, _ := json.Marshal(tl.InputSchema)
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		t.Fatal(err)
	}
	rs, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = json.Marshal(args)
	var inst any
	_ = json.Unmarshal(raw, &inst)
	return rs.Validate(inst)
}

// inspectorCall is one Inspector CLI tool call a README shows.
type inspectorCall struct {
	tool string
	args map[string]any
	line string
}

// inspectorCalls are the Inspector CLI tool calls of a README's shell
// blocks: the tool and its arguments, "$ARGS" built by the python line
// before it.
func inspectorCalls(t *testing.T, readme string) (calls []inspectorCall) {
	t.Helper()
	var pyArgs map[string]any
	toolName := regexp.MustCompile(`--tool-name ([a-z_]+)`)
	toolArg := regexp.MustCompile(`--tool-arg ([a-z_]+)=(\S+)`)
	argsJSON := regexp.MustCompile(`--tool-args-json '([^']*)'`)
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "ARGS=$(python3 -c '") {
			script := strings.TrimSuffix(strings.TrimPrefix(line, "ARGS=$(python3 -c '"), "')")
			py, err := exec.LookPath("python3")
			if err != nil {
				t.Skip("python3 not installed")
			}
			out, err := exec.Command(py, "-c", script).Output()
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			pyArgs = nil
			if err := json.Unmarshal(out, &pyArgs); err != nil {
				t.Fatalf("%s printed %s: %v", line, out, err)
			}
			continue
		}
		m := toolName.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		args := map[string]any{}
		switch {
		case strings.Contains(line, `--tool-args-json "$ARGS"`):
			if pyArgs == nil {
				t.Fatalf("%s: no ARGS line before it", line)
			}
			args = pyArgs
		case argsJSON.MatchString(line):
			if err := json.Unmarshal([]byte(argsJSON.FindStringSubmatch(line)[1]), &args); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
		}
		for _, a := range toolArg.FindAllStringSubmatch(line, -1) {
			// The Inspector CLI sends a value that parses as JSON as that value.
			var v any
			if json.Unmarshal([]byte(a[2]), &v) != nil {
				v = a[2]
			}
			args[a[1]] = v
		}
		calls = append(calls, struct {
			tool string
			args map[string]any
			line string
		}{m[1], args, line})
	}
	return calls
}

// TestReadmeExampleCalls: every Inspector call and JSON example in the
// READMEs is valid input for the tool it names (by the served schema), and
// the walk-through of README.md runs as written against the local suite:
// 150 records, the statuses it names, 15 failed records from the
// simulator's every-10th failure, results page by page and a CSV export.
func TestReadmeExampleCalls(t *testing.T) {
	s := newSuite(t) // the simulator fails every 10th record, as make dev's default
	cs := s.client("alice")
	tools := servedTools(t, cs)
	for _, path := range []string{rootReadme, toolReadme} {
		calls := inspectorCalls(t, readFile(t, path))
		if len(calls) == 0 {
			t.Errorf("%s: no Inspector tool calls found", path)
		}
		for _, c := range calls {
			tl := tools[c.tool]
			if tl == nil {
				t.Errorf("%s: %s: not a served tool", path, c.line)
				continue
			}
			args := map[string]any{}
			for k, v := range c.args {
				if v == "<job_id>" || v == "<next_cursor>" {
					v = "placeholder"
				}
				args[k] = v
			}
			if err := validates(t, tl, args); err != nil {
				t.Errorf("%s: %s: %v", path, c.line, err)
			}
		}
	}

	// The jsonc example after "// submit_batch:".
	readme := readFile(t, toolReadme)
	m := regexp.MustCompile("(?s)// submit_batch:\n(.*?)\n```").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("no submit_batch example after // submit_batch:")
	}
	var ex map[string]any
	if err := json.Unmarshal([]byte(m[1]), &ex); err != nil {
		t.Fatalf("submit_batch example: %v", err)
	}
	if err := validates(t, tools["submit_batch"], ex); err != nil {
		t.Errorf("submit_batch example: %v", err)
	}
	// shared/content's record example is a submit_batch record.
	cm := regexp.MustCompile("(?s)```json\n(\\{\"id\".*?)\n```").FindStringSubmatch(readFile(t, "../../content/README.md"))
	if cm == nil {
		t.Fatal("no record example in shared/content/README.md")
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(cm[1]), &rec); err != nil {
		t.Fatalf("shared/content record example: %v", err)
	}
	if err := validates(t, tools["submit_batch"], map[string]any{"model": haiku, "records": []any{rec}}); err != nil {
		t.Errorf("shared/content record example: %v", err)
	}

	// The walk-through, run.
	var submitArgs map[string]any
	for _, c := range inspectorCalls(t, readFile(t, rootReadme)) {
		if c.tool == "submit_batch" {
			submitArgs = c.args
		}
	}
	h := call[struct {
		JobID       string `json:"job_id"`
		RecordCount int    `json:"record_count"`
	}](t, cs, "submit_batch", submitArgs)
	if h.RecordCount != 150 {
		t.Errorf("README.md's example submits %d records, it says 150", h.RecordCount)
	}
	// "# repeat: submitted → validating → ...": the statuses get_job shows, in order.
	sm := regexp.MustCompile(`--tool-name get_job --tool-arg job_id=<job_id> +# repeat: (.*)`).FindStringSubmatch(readFile(t, rootReadme))
	if sm == nil {
		t.Fatal("README.md: no get_job line with the statuses to expect")
	}
	want := strings.Split(sm[1], " → ")
	var seen []string
	for i := 0; i < 60 && (len(seen) == 0 || !slices.Contains([]string{"completed", "partially_completed", "failed"}, seen[len(seen)-1])); i++ {
		s.l.Bus.Wait()
		st := call[struct {
			Status string `json:"status"`
		}](t, cs, "get_job", map[string]any{"job_id": h.JobID}).Status
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		s.l.Sim.Step(context.Background())
	}
	// A poll may miss a short status (ingesting passes within one step
	// here); what it sees must be the README's sequence, in its order, from
	// its first status to its last.
	if !isSubsequence(seen, want) || seen[0] != want[0] || seen[len(seen)-1] != want[len(want)-1] {
		t.Errorf("README.md: get_job shows %v; the README says %v", seen, want)
	}
	j := s.finish(cs, h.JobID)
	if j.Status != "partially_completed" || j.Failed != 15 {
		t.Errorf("README.md: a 150-record job ends partially_completed with 15 failed records; got %s with %d failed", j.Status, j.Failed)
	}
	failed := call[struct {
		Records []struct {
			ErrorCode    string `json:"error_code"`
			ErrorMessage string `json:"error_message"`
		} `json:"records"`
	}](t, cs, "get_job_results", map[string]any{"job_id": h.JobID, "status": "failed"})
	if len(failed.Records) != 15 || failed.Records[0].ErrorMessage == "" {
		t.Errorf("get_job_results status=failed lists %d records (first %+v), want 15 with their error", len(failed.Records), failed.Records)
	}
}

// isSubsequence: every element of sub appears in seq, in order.
func isSubsequence(sub, seq []string) bool {
	i := 0
	for _, x := range seq {
		if i < len(sub) && sub[i] == x {
			i++
		}
	}
	return i == len(sub)
}

// docBound is a range or default the tool reference promises for one input:
// "`limit? (1..500, default 100)`", "`custom_attributes? (≤1024)`".
type docBound struct {
	tool, field string
	lo, hi      *float64 // a range lo..hi
	maxLen      int      // ≤N characters
	def         *float64 // the default when the field is omitted
}

var (
	boundField = regexp.MustCompile(`([a-z_]+)\??:? ?\(([^()]*)\)`)
	boundRange = regexp.MustCompile(`^(-?[0-9][0-9,.]*)\.\.(-?[0-9][0-9,]*(?:\.[0-9]+)?)`)
	boundMax   = regexp.MustCompile(`≤([0-9][0-9,]*)`)
	boundDef   = regexp.MustCompile(`default ([0-9][0-9,]*)`)
)

func number(s string) *float64 {
	var f float64
	if err := json.Unmarshal([]byte(strings.ReplaceAll(s, ",", "")), &f); err != nil {
		return nil
	}
	return &f
}

// docBounds reads the ranges, lengths and defaults of the tool table's
// input cells and of the "`tool {...}`" signatures in the text.
func docBounds(t *testing.T, readme string) []docBound {
	t.Helper()
	cells := map[string][]string{}
	for tool, c := range toolTable(t, readme) {
		cells[tool] = append(cells[tool], c[0])
	}
	for _, m := range proseSignature.FindAllStringSubmatch(readme, -1) {
		cells[m[1]] = append(cells[m[1]], m[2])
	}
	var out []docBound
	for tool, cs := range cells {
		for _, cell := range cs {
			cell = strings.ReplaceAll(cell, "`", "")
			for _, m := range boundField.FindAllStringSubmatch(cell, -1) {
				b := docBound{tool: tool, field: m[1]}
				if r := boundRange.FindStringSubmatch(m[2]); r != nil {
					b.lo, b.hi = number(r[1]), number(r[2])
				}
				if r := boundMax.FindStringSubmatch(m[2]); r != nil {
					b.maxLen = int(*number(r[1]))
				}
				if r := boundDef.FindStringSubmatch(m[2]); r != nil {
					b.def = number(r[1])
				}
				if (b.lo != nil && b.hi != nil) || b.maxLen > 0 || b.def != nil {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// TestReadmeToolBounds calls each tool at and past every range the tool
// reference of shared/mcpserver/README.md documents, past every length, and
// without every field that has a documented default: in range is accepted,
// past it is a tool error naming the field, and the default is what the
// answer shows.
func TestReadmeToolBounds(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	done := s.finishedJob(cs, 150)
	call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": docs(150), "index": map[string]any{"name": "docs"}})
	s.settle()

	// Valid arguments of each tool the bounds are tried on, and how the
	// answer shows a field's default.
	base := map[string]map[string]any{
		"submit_batch":          {"model": haiku, "records": records(100)},
		"get_job_results":       {"job_id": done},
		"summarize_results":     {"job_id": done},
		"search_index":          {"index": "docs", "query": "ferns7 lanterns7"},
		"invoke_endpoint_async": {"endpoint_name": "demo-async", "body": "ping", "content_type": "text/plain"},
	}
	shows := map[string]func(map[string]any) float64{
		"get_job_results.limit": func(out map[string]any) float64 { return float64(len(out["records"].([]any))) },
		"search_index.k":        func(out map[string]any) float64 { return float64(len(out["matches"].([]any))) },
		"submit_batch.ttl_days": func(out map[string]any) float64 { return out["ttl_days"].(float64) },
		// The dry run's most output tokens are max_tokens × records.
		"submit_batch.max_tokens": func(out map[string]any) float64 {
			dr := out["dry_run"].(map[string]any)
			return dr["max_output_tokens"].(float64) / dr["records"].(float64)
		},
	}
	with := func(tool, field string, v any) map[string]any {
		args := map[string]any{}
		for k, x := range base[tool] {
			args[k] = x
		}
		if v != nil {
			args[field] = v
		}
		if field == "input_uri" {
			delete(args, "body") // one or the other
		}
		if tool == "submit_batch" && field == "max_tokens" {
			args["dry_run"] = true
		}
		return args
	}
	try := func(tool string, args map[string]any) (map[string]any, string, bool) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return nil, err.Error(), true // a schema refusal is an error too
		}
		out, _ := res.StructuredContent.(map[string]any)
		return out, text(res), res.IsError
	}

	bounds := docBounds(t, readFile(t, toolReadme))
	if len(bounds) < 8 {
		t.Fatalf("found %d documented bounds: %+v", len(bounds), bounds)
	}
	tools := servedTools(t, cs)
	for _, b := range bounds {
		if base[b.tool] == nil {
			t.Errorf("%s.%s: a documented bound this test has no arguments for", b.tool, b.field)
			continue
		}
		t.Run(b.tool+"."+b.field, func(t *testing.T) {
			// The listed schema states what the README documents.
			var prop struct {
				Minimum, Maximum *float64
				MaxLength        *int
			}
			if raw, ok := schemaOf(t, tools[b.tool].InputSchema).Properties[b.field]; !ok || json.Unmarshal(raw, &prop) != nil {
				t.Fatalf("%s has no input %s", b.tool, b.field)
			}
			if b.lo != nil && b.hi != nil && (!samePtr(prop.Minimum, b.lo) || !samePtr(prop.Maximum, b.hi)) {
				t.Errorf("documented range %v..%v; the listed schema says minimum %v maximum %v", *b.lo, *b.hi, ptrOr(prop.Minimum), ptrOr(prop.Maximum))
			}
			if b.maxLen > 0 && !samePtr(prop.MaxLength, &b.maxLen) {
				t.Errorf("documented ≤%d; the listed schema says maxLength %v", b.maxLen, ptrOr(prop.MaxLength))
			}
			if b.lo != nil && b.hi != nil {
				for _, v := range []float64{*b.lo, *b.hi} {
					if _, msg, isErr := try(b.tool, with(b.tool, b.field, v)); isErr {
						t.Errorf("%s=%v is in the documented range %v..%v but refused: %s", b.field, v, *b.lo, *b.hi, msg)
					}
				}
				step := 1.0
				if *b.hi-*b.lo <= 1 {
					step = 0.1
				}
				// 0 in an integer field is the field omitted (its default, as
				// limit: 0 gives 100), so below a range from 1 is tried at -1.
				below := *b.lo - step
				if below == 0 {
					below = -1
				}
				for _, v := range []float64{below, *b.hi + step} {
					if _, msg, isErr := try(b.tool, with(b.tool, b.field, v)); !isErr || !strings.Contains(msg, b.field) {
						t.Errorf("%s=%v is outside the documented range %v..%v: want a tool error naming %s, got error=%v %q", b.field, v, *b.lo, *b.hi, b.field, isErr, msg)
					}
				}
			}
			if b.maxLen > 0 {
				v := strings.Repeat("a", b.maxLen+1)
				if strings.HasSuffix(b.field, "_uri") {
					v = "s3://" + strings.Repeat("a", b.maxLen-4)
				}
				if _, msg, isErr := try(b.tool, with(b.tool, b.field, v)); !isErr || !strings.Contains(msg, b.field) || !strings.Contains(msg, strconv.Itoa(b.maxLen)) {
					t.Errorf("%s of %d characters: want a tool error naming it and %d, got error=%v %q", b.field, len(v), b.maxLen, isErr, msg)
				}
			}
			if b.def != nil {
				show := shows[b.tool+"."+b.field]
				if show == nil {
					t.Fatalf("documented default %v: this test does not know how the answer shows it", *b.def)
				}
				out, msg, isErr := try(b.tool, with(b.tool, b.field, nil))
				if isErr {
					t.Fatalf("without %s: %s", b.field, msg)
				}
				if got := show(out); got != *b.def {
					t.Errorf("without %s the answer shows %v; the README's default is %v", b.field, got, *b.def)
				}
			}
		})
	}
}

// TestReadmeErrorExamples: the tool errors the tool reference quotes are
// what the tools answer, word for word (up to the README's "...").
func TestReadmeErrorExamples(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	readme := readFile(t, toolReadme)
	quote := func(re string) string {
		m := regexp.MustCompile(re).FindStringSubmatch(readme)
		if m == nil {
			t.Fatalf("%s: no example matching %s", toolReadme, re)
		}
		return strings.SplitN(m[1], "...", 2)[0]
	}
	mine := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(3)}).JobID
	cases := []struct {
		name, example, tool string
		args                map[string]any
	}{
		{"records under the batch minimum", quote("e\\.g\\.\n`(invalid input: records: [^`]*)`"), "submit_batch",
			map[string]any{"model": haiku, "records": records(20), "mode": "batch"}},
		{"an image over the pixel limit", quote("e\\.g\\.\n`(invalid input: records: 1 problem[^`]*) \\(https://"), "submit_batch",
			map[string]any{"model": haiku, "records": []map[string]any{imageRecord("receipt-17", b64Image("image/png", pngOf(t, 8001, 2, false)))}}},
		{"another owner's job", quote(`another owner's job is "(job not found)"`), "get_job", map[string]any{"job_id": mine}},
	}
	mallory := s.client("mallory")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := cs
			if c.name == "another owner's job" {
				session = mallory
			}
			if msg := toolErr(t, session, c.tool, c.args); !strings.Contains(msg, c.example) {
				t.Errorf("the README quotes\n  %s\nthe tool answers\n  %s", c.example, msg)
			}
		})
	}
}

// TestReadmeLinks: the upload and export links are what the READMEs say:
// create_upload a signed PUT to /local/uploads in make dev for the stated
// minutes with the stated max_bytes (a JSONL file, an image), export_results
// a signed GET to /local/objects for the stated minutes.
func TestReadmeLinks(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	readme := strings.Join(strings.Fields(readFile(t, toolReadme)), " ")
	root := readFile(t, rootReadme)
	num := func(text, re string) float64 {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no text matches %s", re)
		}
		return *number(m[1])
	}
	expiresIn := func(link string) time.Duration {
		t.Helper()
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		exp, err := strconv.ParseInt(u.Query().Get("exp"), 10, 64)
		if err != nil {
			t.Fatalf("%s: no exp: %v", link, err)
		}
		return time.Until(time.Unix(exp, 0)).Round(time.Minute)
	}
	unit := map[string]float64{"GiB": 1 << 30, "MiB": 1 << 20}
	size := func(re string) int64 {
		m := regexp.MustCompile(re).FindStringSubmatch(readme)
		if m == nil {
			t.Fatalf("no text matches %s", re)
		}
		return int64(*number(m[1]) * unit[m[2]])
	}

	putMin := num(readme, `url \(presigned S3 PUT, ([0-9]+) min\)`)
	if rootMin := num(root, `/local/uploads\?\.\.\.`+"` \\(HMAC-signed, ([0-9]+) minutes\\)"); rootMin != putMin {
		t.Errorf("README.md says upload links last %v minutes, the tool reference %v", rootMin, putMin)
	}
	for _, c := range []struct {
		contentType string
		maxBytes    int64
	}{
		{"", size(`max_bytes \(([0-9]+) (GiB|MiB);`)},
		{"image/png", size(`max_bytes \([0-9]+ [GM]iB; ([0-9]+) (GiB|MiB) for an image or document\)`)},
	} {
		args := map[string]any{}
		if c.contentType != "" {
			args["content_type"] = c.contentType
		}
		up := call[mcpserver.CreateUploadOut](t, cs, "create_upload", args)
		if !strings.Contains(up.URL, "/local/uploads?") || up.Method != "PUT" {
			t.Errorf("create_upload %q: %s %s, README.md: PUT .../local/uploads?...", c.contentType, up.Method, up.URL)
		}
		if got := expiresIn(up.URL); got != time.Duration(putMin)*time.Minute || up.ExpiresIn != int(putMin*60) {
			t.Errorf("create_upload %q: link lasts %v (expires_in_seconds %d), README %v min", c.contentType, got, up.ExpiresIn, putMin)
		}
		if up.MaxBytes != c.maxBytes {
			t.Errorf("create_upload %q: max_bytes %d, README %d", c.contentType, up.MaxBytes, c.maxBytes)
		}
	}

	getMin := num(readme, `url \(presigned GET, ([0-9]+) min\)`)
	ex := call[mcpserver.ExportOut](t, cs, "export_results", map[string]any{"job_id": s.finishedJob(cs, 3), "format": "csv"})
	if !strings.Contains(ex.URL, "/local/objects?") {
		t.Errorf("export link %s, README.md: GET .../local/objects?...", ex.URL)
	}
	if got := expiresIn(ex.URL); got != time.Duration(getMin)*time.Minute {
		t.Errorf("export link lasts %v, README %v min", got, getMin)
	}
}

// TestReadmeToolDetails checks the tool reference's finer promises: the
// tools that name the MCP App page, the cost fields, the list_models example
// row, and how many recent jobs resources/list shows.
func TestReadmeToolDetails(t *testing.T) {
	s := newCleanSuite(t)
	cs := s.client("alice")
	tools := servedTools(t, cs)
	readme := readFile(t, toolReadme)
	flat := strings.Join(strings.Fields(readme), " ")

	t.Run("MCP App tools", func(t *testing.T) {
		m := regexp.MustCompile("show a live job view beside (.*?): the tools name `(ui://[a-z/]+)` \\(or `(ui://[a-z/]+)`\\) in `_meta\\.ui\\.resourceUri`").FindStringSubmatch(flat)
		if m == nil {
			t.Fatal("no list of the MCP App tools")
		}
		var want, got []string
		for _, n := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
			want = append(want, n[1])
		}
		for name, tl := range tools {
			ui, _ := tl.Meta["ui"].(map[string]any)
			if uri, _ := ui["resourceUri"].(string); uri != "" {
				got = append(got, name)
				if uri != m[2] && uri != m[3] {
					t.Errorf("%s names %s, README %s or %s", name, uri, m[2], m[3])
				}
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("tools naming the App: %v; README %v", got, want)
		}
	})

	t.Run("cost fields", func(t *testing.T) {
		start := strings.Index(readme, "#### Cost fields")
		if start < 0 {
			t.Fatal("no Cost fields section")
		}
		section, _, _ := strings.Cut(readme[start:], "Each part is rounded")
		out := schemaOf(t, tools["get_job"].OutputSchema)
		cost := schemaOf(t, json.RawMessage(out.Properties["cost"]))
		n := 0
		for _, row := range regexp.MustCompile("(?m)^\\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|").FindAllStringSubmatch(section, -1) {
			for _, f := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(row[1], -1) {
				n++
				if _, ok := cost.Properties[f[1]]; !ok {
					t.Errorf("cost field %s: not in get_job's cost (%v)", f[1], slices.Sorted(maps.Keys(cost.Properties)))
				}
			}
		}
		if n < 8 {
			t.Errorf("found %d cost fields", n)
		}
	})

	t.Run("list_models example", func(t *testing.T) {
		m := regexp.MustCompile("(?s)`list_models` returns the models this deployment offers, one object per model:\n\n```json\n(.*?)\n```").FindStringSubmatch(readme)
		if m == nil {
			t.Fatal("no list_models example")
		}
		var ex map[string]any
		if err := json.Unmarshal([]byte(m[1]), &ex); err != nil {
			t.Fatal(err)
		}
		listing := call[struct {
			Models []map[string]any `json:"models"`
		}](t, cs, "list_models", map[string]any{})
		var row map[string]any
		for _, r := range listing.Models {
			if r["id"] == ex["id"] {
				row = r
			}
		}
		if row == nil {
			t.Fatalf("list_models has no %v", ex["id"])
		}
		for k, v := range ex {
			got, _ := json.Marshal(row[k])
			want, _ := json.Marshal(v)
			if string(got) != string(want) {
				t.Errorf("%s: list_models shows %s, the README %s", k, got, want)
			}
		}
	})

	t.Run("list_models rows", func(t *testing.T) {
		for _, want := range []string{"Anthropic API models are offered for batch only.", "Embedding models have no `max_tokens` (the field shows 0).",
			"no batch prices for models that cannot run in batch"} {
			if !strings.Contains(flat, want) {
				t.Fatalf("the tool reference no longer says %q: update this test", want)
			}
		}
		rows := call[struct {
			Models []struct {
				ID        string             `json:"id"`
				Provider  string             `json:"provider"`
				Task      string             `json:"task"`
				Modes     []string           `json:"modes"`
				MaxOutput int                `json:"max_output_tokens"`
				Prices    map[string]float64 `json:"prices_per_million"`
			} `json:"models"`
		}](t, cs, "list_models", map[string]any{}).Models
		for _, r := range rows {
			if r.Provider == "anthropic" && !slices.Equal(r.Modes, []string{"batch"}) {
				t.Errorf("%s: an Anthropic API model with modes %v", r.ID, r.Modes)
			}
			if r.Task == "embedding" && r.MaxOutput != 0 {
				t.Errorf("%s: an embedding model with max_output_tokens %d", r.ID, r.MaxOutput)
			}
			if !slices.Contains(r.Modes, "batch") {
				for k := range r.Prices {
					if strings.HasPrefix(k, "batch_") {
						t.Errorf("%s: runs no batch but lists %s", r.ID, k)
					}
				}
			}
		}
	})

	t.Run("recent jobs in resources/list", func(t *testing.T) {
		m := regexp.MustCompile("`resources/list` shows your ([0-9]+) most recent jobs").FindStringSubmatch(flat)
		if m == nil {
			t.Fatal("no resources/list promise")
		}
		n, _ := strconv.Atoi(m[1])
		var ids []string
		for i := 0; i <= n; i++ {
			ids = append(ids, call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": haiku, "records": records(1)}).JobID)
		}
		res, err := cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var jobs []string
		for _, r := range res.Resources {
			if id, ok := strings.CutPrefix(r.URI, "mcpbatch://jobs/"); ok {
				jobs = append(jobs, id)
			}
		}
		slices.Reverse(ids) // newest first
		if !slices.Equal(jobs, ids[:n]) {
			t.Errorf("resources/list shows %d jobs %v; want the %d most recent %v", len(jobs), jobs, n, ids[:n])
		}
	})
}

// TestReadmeSubmitProgress: submit_batch with inline records and a
// progressToken hears progress every README-stated number of records.
func TestReadmeSubmitProgress(t *testing.T) {
	m := regexp.MustCompile("`submit_batch` with inline records \\(every ([0-9,]+) records encoded\\)").FindStringSubmatch(strings.Join(strings.Fields(readFile(t, toolReadme)), " "))
	if m == nil {
		t.Fatal("no submit progress promise")
	}
	every := int(*number(m[1]))
	s := newCleanSuite(t)
	var mu sync.Mutex
	var got []float64
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params.Progress)
			mu.Unlock()
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.srv.URL + "/mcp", HTTPClient: clientFor("alice"), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	n := 2*every + every/2
	params := &mcp.CallToolParams{Name: "submit_batch", Arguments: map[string]any{"model": haiku, "records": records(n)}}
	params.SetProgressToken("submit-1")
	if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
		t.Fatalf("submit: %v %s", err, text(res))
	}
	waitForNotes(&mu, func() int { return len(got) }, 2)
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(got)
	if want := []float64{float64(every), float64(2 * every)}; !slices.Equal(got, want) {
		t.Errorf("progress at %v records, want %v", got, want)
	}
}

// TestReadmeSoak: infra/local/README.md's account of the chaos soak: its job
// count, and a fault override example the soak takes.
func TestReadmeSoak(t *testing.T) {
	text := strings.Join(strings.Fields(readFile(t, "../../../infra/local/README.md")), " ")
	m := regexp.MustCompile("`TestEndToEnd/ChaosSoak` \\(`shared/app/local/soak_test.go`, with `MCPBATCH_E2E=1`[^)]*\\) runs ([0-9]+) jobs").FindStringSubmatch(text)
	if m == nil || m[1] != strconv.Itoa(soakJobs()) {
		t.Errorf("the README says the soak runs %v jobs, it runs %d", m, soakJobs())
	}
	ex := regexp.MustCompile("`" + soakFaultsEnv + "=([^`]*)`").FindStringSubmatch(text)
	if ex == nil {
		t.Fatal("no fault override example")
	}
	if _, err := soakFaultRates(ex[1]); err != nil {
		t.Errorf("the README's example %s: %v", ex[1], err)
	}
}

// TestReadmeDevEndpoints: the SageMaker endpoints the tool reference says
// make dev simulates exist, demo-canary split as it says and
// demo-async-zero at zero instances.
func TestReadmeDevEndpoints(t *testing.T) {
	text := strings.Join(strings.Fields(readFile(t, toolReadme)), " ")
	m := regexp.MustCompile("In `make dev` the endpoints (.*?) are SIMULATED").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("no list of make dev's endpoints")
	}
	s := newCleanSuite(t)
	cs := s.client("alice")
	n := 0
	for _, e := range regexp.MustCompile("`([a-z-]+)`( \\(([0-9]+)/([0-9]+)\\))?( \\(starts at zero instances\\))?").FindAllStringSubmatch(m[1], -1) {
		n++
		out := call[struct {
			Instances int `json:"instances"`
			Variants  []struct {
				Weight float64 `json:"current_weight"`
			} `json:"variants"`
		}](t, cs, "describe_endpoint", map[string]any{"endpoint_name": e[1]})
		if e[2] != "" {
			var got []string
			for _, v := range out.Variants {
				got = append(got, strconv.FormatFloat(v.Weight, 'f', -1, 64))
			}
			if strings.Join(got, "/") != e[3]+"/"+e[4] {
				t.Errorf("%s: weights %v, README %s/%s", e[1], got, e[3], e[4])
			}
		}
		if e[5] != "" && out.Instances != 0 {
			t.Errorf("%s: %d instances, README: starts at zero", e[1], out.Instances)
		}
	}
	if n != len(local.SimEndpoints) {
		t.Errorf("the README names %d endpoints (%q), make dev simulates %v", n, m[1], local.SimEndpoints)
	}
}

// TestReadmeDevMetricsFile: make dev writes the EMF lines the metrics README
// lists to the file it names, under the state folder.
func TestReadmeDevMetricsFile(t *testing.T) {
	m := regexp.MustCompile("`make dev` writes the same lines to `\\.mcpbatch/([a-z.]+)`").FindStringSubmatch(readFile(t, "../../metrics/README.md"))
	if m == nil {
		t.Fatal("the metrics README names no file")
	}
	s := newCleanSuite(t)
	cs := s.client("alice")
	s.finishedJob(cs, 3)
	if got := filepath.Base(s.l.MetricsFile.Name()); got != m[1] {
		t.Fatalf("make dev writes metrics to %s, the README says %s", got, m[1])
	}
	b, err := os.ReadFile(s.l.MetricsFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"JobsFinished"`) || !strings.Contains(string(b), `"_aws"`) {
		t.Errorf("%s holds no JobsFinished EMF line after a job ended:\n%s", m[1], b)
	}
}

// TestReadmeRetryKeepsRecords: a submit keeps the caller's records where the
// tool reference says (input/<job>/inputs.jsonl), and a job without them
// (submitted before retry_failed existed) is refused with "resubmit".
func TestReadmeRetryKeepsRecords(t *testing.T) {
	m := regexp.MustCompile("keep your records as you sent them \\(`input/<job>/([a-z.]+)`").FindStringSubmatch(strings.Join(strings.Fields(readFile(t, toolReadme)), " "))
	if m == nil {
		t.Fatal("the tool reference does not say where records are kept")
	}
	s := newSuite(t) // every 10th record fails: there is something to retry
	cs := s.client("alice")
	id := s.finishedJob(cs, 150)
	uri := local.Bucket + "/input/" + id + "/" + m[1]
	rc, err := s.l.Blobs.Open(context.Background(), uri, 0)
	if err != nil {
		t.Fatalf("the records are not kept at %s: %v", uri, err)
	}
	rc.Close()
	if err := s.l.Blobs.Delete(context.Background(), uri); err != nil {
		t.Fatal(err)
	}
	if msg := toolErr(t, cs, "retry_failed", map[string]any{"job_id": id}); !strings.Contains(msg, "resubmit") {
		t.Errorf("retry of a job whose records were not kept: %q, want it to say resubmit", msg)
	}
}

// TestReadmeEmbeddingDefaults: an embedding submit without dimensions gets
// the model's largest, and an index without metric the README's default.
func TestReadmeEmbeddingDefaults(t *testing.T) {
	text := strings.Join(strings.Fields(readFile(t, toolReadme)), " ")
	m := regexp.MustCompile("`dimensions` \\(Titan ([0-9/]+), default the largest\\)").FindStringSubmatch(text)
	mt := regexp.MustCompile("`index: \\{name, metric\\?\\}` \\(`([a-z]+)` default, or `([a-z]+)`\\)").FindStringSubmatch(text)
	if m == nil || mt == nil {
		t.Fatalf("the tool reference states no embedding defaults (%v, %v)", m, mt)
	}
	dims := strings.Split(m[1], "/")
	largest, _ := strconv.Atoi(dims[len(dims)-1])
	s := newCleanSuite(t)
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": docs(3), "index": map[string]any{"name": "defaults"}})
	s.finish(cs, h.JobID)
	res := call[mcpserver.ResultsOut](t, cs, "get_job_results", map[string]any{"job_id": h.JobID, "limit": 1})
	if len(res.Records) != 1 || res.Records[0].Dimensions != largest {
		t.Errorf("Titan without dimensions: %+v, want %d dimensions", res.Records, largest)
	}
	ls := call[mcpserver.ListIndexesOut](t, cs, "list_indexes", map[string]any{})
	if len(ls.Indexes) != 1 || ls.Indexes[0].Metric != mt[1] || ls.Indexes[0].Dimension != largest {
		t.Errorf("index without metric: %+v, want metric %s of %d dimensions", ls.Indexes, mt[1], largest)
	}
	// The other metric is taken.
	h = call[mcpserver.JobHandle](t, cs, "submit_batch", map[string]any{"model": titan, "records": docs(3), "index": map[string]any{"name": "other", "metric": mt[2]}})
	if j := s.finish(cs, h.JobID); j.Status != "completed" {
		t.Errorf("an index with metric %s: job %s", mt[2], j.Status)
	}
}

// TestReadmeServiceFigures: figures the tool reference states that live in
// the services' constants.
func TestReadmeServiceFigures(t *testing.T) {
	text := strings.ReplaceAll(strings.Join(strings.Fields(readFile(t, toolReadme)), " "), ",", "")
	for _, c := range []struct {
		re   string
		want int
	}{
		{"runs every [0-9]+ minutes \\(`-c reconcileMinutes=N`\\) bounded to ([0-9]+) jobs per provider", reconcile.DefaultReconcileLimit},
		{"chunk_chars \\(default ([0-9]+)\\)", pipeline.DefaultChunkChars},
	} {
		m := regexp.MustCompile(c.re).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("the tool reference: nothing matches %s", c.re)
			continue
		}
		if m[1] != strconv.Itoa(c.want) {
			t.Errorf("%s: the README says %s, the code %d", c.re, m[1], c.want)
		}
	}
}

// TestReadmeEmbedExample runs the tool reference's two embedding commands
// as written: the embed submit completes, and the search finds the record
// whose words the query names first.
func TestReadmeEmbedExample(t *testing.T) {
	var calls []inspectorCall
	for _, c := range inspectorCalls(t, readFile(t, toolReadme)) {
		if c.tool == "submit_batch" && c.args["index"] != nil || c.tool == "search_index" {
			calls = append(calls, c)
		}
	}
	if len(calls) != 2 || calls[0].tool != "submit_batch" || calls[1].tool != "search_index" {
		t.Fatalf("want the embed submit then the search, got %+v", calls)
	}
	s := newCleanSuite(t)
	cs := s.client("alice")
	h := call[mcpserver.JobHandle](t, cs, "submit_batch", calls[0].args)
	if j := s.finish(cs, h.JobID); j.Status != "completed" {
		t.Fatalf("the README's embed job ended %s", j.Status)
	}
	out := call[mcpserver.SearchOut](t, cs, "search_index", calls[1].args)
	words := regexp.MustCompile(`[a-z]+([0-9]+)`).FindStringSubmatch(calls[1].args["query"].(string))
	if len(out.Matches) == 0 || words == nil || out.Matches[0].ID != "doc-"+words[1] {
		t.Errorf("the README's search %v found %+v, want doc-%v first", calls[1].args, out.Matches, words)
	}
}
