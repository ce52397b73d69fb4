package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/notify"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/retry"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
	"github.com/mcpbatch/mcpbatch/shared/summary"
)

// Limit is one input limit a tool's listed schema states, from the constant
// the validation holds that input to. Path names the property from the
// schema's root: names joined by ".", "[]" for an array's items
// ("records[].id").
type Limit struct {
	Tool, Path string
	Enum       []string
	Minimum    *float64
	Maximum    *float64
	MaxLength  *int
	MaxItems   *int
}

func between(tool, path string, lo, hi float64) Limit {
	return Limit{Tool: tool, Path: path, Minimum: &lo, Maximum: &hi}
}

func atLeast(tool, path string, lo float64) Limit {
	return Limit{Tool: tool, Path: path, Minimum: &lo}
}

func maxLen(tool, path string, n int) Limit { return Limit{Tool: tool, Path: path, MaxLength: &n} }

func maxItems(tool, path string, n int) Limit { return Limit{Tool: tool, Path: path, MaxItems: &n} }

func oneOf(tool, path string, values ...string) Limit {
	return Limit{Tool: tool, Path: path, Enum: values}
}

// InputLimits are every input limit the tools' listed schemas state: the one
// table, each value the constant the validation uses (or the values its
// switch accepts). A test (shared/app/local) sends each limit's first
// refused value through the tool and expects the validation to refuse it
// naming the field, so the table and the validation cannot drift apart.
//
// The limits are stated in the listed schema only: the SDK validates a call
// against the schema the tool was registered with (types, as inferred), and
// the limits themselves are held by the validation, whose refusals name the
// field, the limit and what to do (the SDK's schema errors echo the whole
// over-long value, print 365 as 365.000000 and skip the tool call's log
// line), and which a file submit's lines go through too.
func InputLimits() []Limit {
	ttl := func(tool string) Limit { return between(tool, "ttl_days", job.MinTTLDays, job.MaxTTLDays) }
	page := func(tool string) Limit { return between(tool, "limit", job.MinPageSize, job.MaxPageSize) }
	results := []string{job.ResultsAll, string(job.RecordSucceeded), string(job.RecordFailed)}
	modes := []string{job.ModeAuto, job.ModeBatch, job.ModeOnDemand}
	statuses := make([]string, len(job.AllStatuses))
	for i, st := range job.AllStatuses {
		statuses[i] = string(st)
	}
	return []Limit{
		ttl("submit_batch"),
		atLeast("submit_batch", "max_tokens", job.MinMaxTokens),
		between("submit_batch", "temperature", job.MinTemperature, job.MaxTemperature),
		maxLen("submit_batch", "name", job.MaxJobNameLen),
		oneOf("submit_batch", "mode", modes...),
		oneOf("submit_batch", "provider", job.ProviderBedrock, job.ProviderAnthropic),
		oneOf("submit_batch", "tier", model.TierAuto, model.TierStandard, model.TierFlex, model.TierPriority),
		oneOf("submit_batch", "input_type", batch.CohereInputTypes...),
		oneOf("submit_batch", "truncate", job.TruncateNone, job.TruncateStart, job.TruncateEnd),
		atLeast("submit_batch", "budget_usd", 0),
		maxLen("submit_batch", "records[].id", job.MaxRecordIDLen),
		maxItems("submit_batch", "input_upload_ids", transfer.MaxJobFiles),
		oneOf("submit_batch", "records[].messages[].role", job.RoleUser, job.RoleAssistant),
		maxLen("submit_batch", "index.name", index.MaxNameLen),
		oneOf("submit_batch", "index.metric", string(index.Cosine), string(index.Euclidean)),
		maxLen("submit_batch", "notify.webhook", notify.MaxURLLen),
		maxItems("submit_batch", "categories", outschema.MaxCategories),
		maxLen("submit_batch", "categories[]", outschema.MaxCategoryLen),

		oneOf("get_job_results", "status", results...),
		page("get_job_results"),
		oneOf("list_jobs", "status", statuses...),
		page("list_jobs"),
		oneOf("export_results", "format", transfer.ExportJSONL, transfer.ExportCSV, transfer.ExportParquet),
		oneOf("export_results", "status", results...),

		between("summarize_results", "top", 1, summary.MaxTop),
		oneOf("summarize_results", "status", results...),
		maxLen("summarize_results", "field", summary.MaxFieldLen),
		maxLen("summarize_results", "stats_field", summary.MaxFieldLen),
		maxLen("summarize_results", "where_field", summary.MaxFieldLen),

		oneOf("retry_failed", "which", job.RetryAll, job.RetryRetryable, job.RetryIDs),
		maxItems("retry_failed", "record_ids", retry.MaxRecordIDs),
		oneOf("retry_failed", "mode", modes...),
		atLeast("retry_failed", "max_tokens", job.MinMaxTokens),
		atLeast("retry_failed", "budget_usd", 0),
		maxLen("retry_failed", "notify.webhook", notify.MaxURLLen),

		ttl("invoke_endpoint_async"),
		between("invoke_endpoint_async", "inference_timeout_s", job.SageMakerMinInvocationTimeout, job.SageMakerMaxInvocationTimeout),
		between("invoke_endpoint_async", "request_ttl_s", job.SageMakerMinRequestTTL, job.SageMakerMaxRequestTTL),
		maxLen("invoke_endpoint_async", "custom_attributes", job.SageMakerMaxCustomAttributes),
		maxLen("invoke_endpoint_async", "input_uri", job.SageMakerMaxInputLocation),
		maxLen("invoke_endpoint_async", "notify.webhook", notify.MaxURLLen),
		atLeast("shift_traffic", "weights[].weight", 0),

		between("search_index", "k", index.MinTopK, index.MaxTopK),
		maxLen("search_index", "index", index.MaxNameLen),
		maxLen("delete_index", "index", index.MaxNameLen),
		maxLen("create_upload", "content_type", maxContentTypeLen),
		page("list_reports"),
	}
}

// limitedInputs are the listed input schemas: each tool's registered schema
// with its InputLimits applied, built once per registered tool.
type limitedInputs struct {
	mu     sync.Mutex
	byTool map[*mcp.Tool]*mcp.Tool
	limits map[string][]Limit
}

func newLimitedInputs() *limitedInputs {
	l := &limitedInputs{byTool: map[*mcp.Tool]*mcp.Tool{}, limits: map[string][]Limit{}}
	for _, lim := range InputLimits() {
		l.limits[lim.Tool] = append(l.limits[lim.Tool], lim)
	}
	return l
}

// middleware answers tools/list with the limited schemas.
func (l *limitedInputs) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		lr, ok := res.(*mcp.ListToolsResult)
		if err != nil || method != "tools/list" || !ok {
			return res, err
		}
		out := *lr
		out.Tools = make([]*mcp.Tool, len(lr.Tools))
		for i, t := range lr.Tools {
			if out.Tools[i], err = l.listed(t); err != nil {
				return nil, err
			}
		}
		return &out, nil
	}
}

// listed is t as tools/list shows it.
func (l *limitedInputs) listed(t *mcp.Tool) (*mcp.Tool, error) {
	lims := l.limits[t.Name]
	if len(lims) == 0 {
		return t, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lt, ok := l.byTool[t]; ok {
		return lt, nil
	}
	in, ok := t.InputSchema.(*jsonschema.Schema)
	if !ok {
		return nil, fmt.Errorf("tool %s: input schema is a %T, not an inferred schema", t.Name, t.InputSchema)
	}
	in = in.CloneSchemas()
	for _, lim := range lims {
		if err := lim.apply(in); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
	}
	lt := *t
	lt.InputSchema = in
	l.byTool[t] = &lt
	return &lt, nil
}

// apply sets the limit on its property of root.
func (lim Limit) apply(root *jsonschema.Schema) error {
	s, err := Property(root, lim.Path)
	if err != nil {
		return err
	}
	for _, v := range lim.Enum {
		s.Enum = append(s.Enum, v)
	}
	if lim.Minimum != nil {
		s.Minimum = lim.Minimum
	}
	if lim.Maximum != nil {
		s.Maximum = lim.Maximum
	}
	if lim.MaxLength != nil {
		s.MaxLength = lim.MaxLength
	}
	if lim.MaxItems != nil {
		s.MaxItems = lim.MaxItems
	}
	return nil
}

// Property is the sub-schema of root at path (see Limit); an error when the
// schema has no such property, so a limit cannot name one that is not there.
func Property(root *jsonschema.Schema, path string) (*jsonschema.Schema, error) {
	s := root
	for _, name := range strings.Split(path, ".") {
		items := 0
		for strings.HasSuffix(name, "[]") {
			name, items = strings.TrimSuffix(name, "[]"), items+1
		}
		if s = s.Properties[name]; s == nil {
			return nil, fmt.Errorf("schema has no property %s", path)
		}
		for ; items > 0; items-- {
			if s = s.Items; s == nil {
				return nil, fmt.Errorf("schema property %s is not an array", path)
			}
		}
	}
	return s, nil
}

// addTool registers a typed tool with its output schema single-typed (see
// singleTyped).
func addTool[In, Out any](srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	if t.OutputSchema == nil {
		t.OutputSchema = outputSchema[Out]()
	}
	mcp.AddTool(srv, t, h)
}

// outputSchema is the schema inferred from Out, single-typed.
func outputSchema[Out any]() *jsonschema.Schema {
	s, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("output schema of %T: %v", *new(Out), err))
	}
	singleTyped(s)
	return s
}

// singleTyped drops the "null" the inference adds for Go slices, maps and
// pointers (["null","array"]), so every output property has one type: a
// client reads an absent property (omitempty), never a null, and the types
// whose JSON is checked against the schema on each call (the SDK validates
// every typed tool's output) are built with empty slices, not nil ones.
func singleTyped(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && (s.Types[0] == "null" || s.Types[1] == "null") {
		s.Type = s.Types[0]
		if s.Type == "null" {
			s.Type = s.Types[1]
		}
		s.Types = nil
	}
	for _, p := range s.Properties {
		singleTyped(p)
	}
	singleTyped(s.Items)
	singleTyped(s.AdditionalProperties)
	for _, sub := range s.Defs {
		singleTyped(sub)
	}
}
