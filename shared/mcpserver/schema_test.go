package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everyTool is a server with every optional tool set on; the tools are only
// listed, never called.
type everyTool struct {
	Retrier
	Summarizer
	NotifyChecker
	WebhookSecrets
}

// listedTools are the tools as a client lists them (decoded from the wire).
func listedTools(t *testing.T) map[string]*mcp.Tool {
	t.Helper()
	all := everyTool{}
	s := &Server{Retries: all, Notify: all, Features: Features{Uploads: true, Exports: true, SageMaker: true, Reports: true, Vectors: true}}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "schema-test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		tools[tl.Name] = tl
	}
	return tools
}

// schemaOf decodes a listed schema (a map on the client side).
func schemaOf(t *testing.T, v any) *jsonschema.Schema {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// Every limit of the table is in the listed input schema of its tool, at its
// property, with the table's value (the validation's constant).
func TestListedSchemasStateInputLimits(t *testing.T) {
	tools := listedTools(t)
	for _, lim := range InputLimits() {
		t.Run(lim.Tool+"."+lim.Path, func(t *testing.T) {
			tl := tools[lim.Tool]
			if tl == nil {
				t.Fatalf("tool %s is not served", lim.Tool)
			}
			p, err := Property(schemaOf(t, tl.InputSchema), lim.Path)
			if err != nil {
				t.Fatal(err)
			}
			var enum []string
			for _, v := range p.Enum {
				enum = append(enum, fmt.Sprint(v))
			}
			for _, c := range []struct{ keyword, got, want string }{
				{"enum", strings.Join(enum, ","), strings.Join(lim.Enum, ",")},
				{"minimum", ptrString(p.Minimum), ptrString(lim.Minimum)},
				{"maximum", ptrString(p.Maximum), ptrString(lim.Maximum)},
				{"maxLength", ptrString(p.MaxLength), ptrString(lim.MaxLength)},
				{"maxItems", ptrString(p.MaxItems), ptrString(lim.MaxItems)},
			} {
				if c.got != c.want {
					t.Errorf("%s: %s, want %s", c.keyword, c.got, c.want)
				}
			}
		})
	}
}

// A limit naming a property the schema lacks is refused, not skipped.
func TestLimitOnMissingProperty(t *testing.T) {
	in, err := jsonschema.For[SubmitIn](nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"ttl_day", "records[].identifier", "name[]", "records.id"} {
		if err := maxLen("submit_batch", path, 1).apply(in); err == nil {
			t.Errorf("limit on %s: no error", path)
		}
	}
	if err := maxLen("submit_batch", "records[].messages[].role", 1).apply(in); err != nil {
		t.Errorf("limit on records[].messages[].role: %v", err)
	}
}

// multiTyped lists the paths of s that have more than one type.
func multiTyped(s *jsonschema.Schema, path string) []string {
	if s == nil {
		return nil
	}
	var out []string
	if len(s.Types) > 1 {
		out = append(out, fmt.Sprintf("%s %v", path, s.Types))
	}
	for name, p := range s.Properties {
		out = append(out, multiTyped(p, path+"."+name)...)
	}
	out = append(out, multiTyped(s.Items, path+"[]")...)
	out = append(out, multiTyped(s.AdditionalProperties, path+"{}")...)
	for name, d := range s.Defs {
		out = append(out, multiTyped(d, "$defs."+name)...)
	}
	return out
}

// Every output schema gives each property one type (no ["null","array"]).
func TestOutputSchemasSingleTyped(t *testing.T) {
	tools := listedTools(t)
	if len(tools) < 20 {
		t.Fatalf("%d tools listed", len(tools))
	}
	for name, tl := range tools {
		if tl.OutputSchema == nil {
			continue
		}
		if bad := multiTyped(schemaOf(t, tl.OutputSchema), ""); len(bad) > 0 {
			slices.Sort(bad)
			t.Errorf("%s: output schema has several types at %s", name, strings.Join(bad, ", "))
		}
	}
}
