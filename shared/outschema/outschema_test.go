package outschema

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

const ticket = `{"type":"object","properties":{"category":{"type":"string","enum":["billing","bug","other"]},"confidence":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}}},"required":["category","confidence"],"additionalProperties":false}`

func TestCheck(t *testing.T) {
	s, err := Compile([]byte(ticket))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, out  string
		code, path string
		want       string
	}{
		{name: "conforming", out: `{"category":"billing","confidence":0.9}`, want: `{"category":"billing","confidence":0.9}`},
		{name: "fenced and spaced", out: "  ```json\n{\"category\": \"bug\", \"confidence\": 1}\n```\n", want: `{"category":"bug","confidence":1}`},
		{name: "not JSON", out: "The category is billing.", code: job.RecordParseFailed},
		{name: "two values", out: `{"category":"bug","confidence":1} {}`, code: job.RecordParseFailed},
		{name: "enum", out: `{"category":"refund","confidence":0.5}`, code: job.RecordSchemaViolation, path: "/category"},
		{name: "missing required", out: `{"category":"bug"}`, code: job.RecordSchemaViolation},
		{name: "extra property", out: `{"category":"bug","confidence":1,"why":"x"}`, code: job.RecordSchemaViolation},
		{name: "nested type", out: `{"category":"bug","confidence":1,"tags":[1]}`, code: job.RecordSchemaViolation, path: "/tags/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, v := s.Check(tc.out)
			if tc.code == "" {
				if v != nil {
					t.Fatalf("violation %+v", v)
				}
				if string(got) != tc.want {
					t.Fatalf("got %s, want %s", got, tc.want)
				}
				return
			}
			if v == nil || v.Code != tc.code || v.Path != tc.path || v.Message == "" {
				t.Fatalf("violation = %+v, want code %s path %q", v, tc.code, tc.path)
			}
		})
	}
}

func TestCompileRefuses(t *testing.T) {
	big := `{"type":"string","description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`
	deep := strings.Repeat(`{"type":"array","items":`, MaxDepth) + `{"type":"string"}` + strings.Repeat("}", MaxDepth)
	for _, tc := range []struct{ name, schema, field string }{
		{"too big", big, "output_schema"},
		{"not JSON", `{"type":`, "output_schema"},
		{"not an object", `["string"]`, "output_schema"},
		{"other draft", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"string"}`, "output_schema.$schema"},
		{"bad keyword value", `{"type":"strin"}`, "output_schema"},
		{"external ref", `{"$ref":"https://example.com/s.json"}`, "output_schema"},
		{"too deep", deep, "output_schema.items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile([]byte(tc.schema))
			var fe *job.FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, tc.field) {
				t.Fatalf("err = %v, want a field error on %s", err, tc.field)
			}
		})
	}
}

func TestCheckDialect(t *testing.T) {
	m := &model.Model{ID: "anthropic.claude-haiku-4-5-20251001-v1:0"}
	d, ok := model.NativeOutput(m, model.APIBedrockConverseBatch)
	if !ok {
		t.Fatal("Haiku 4.5 has no native batch constraint in the catalog")
	}
	for _, tc := range []struct{ name, schema, field string }{
		{"fits", ticket, ""},
		{"categories shortcut", string(must(Categories([]string{"a", "b"}, true))), ""},
		{"numeric bound", `{"type":"object","properties":{"n":{"type":"number","minimum":0}},"additionalProperties":false}`, "output_schema.properties.n.minimum"},
		{"string length", `{"type":"object","properties":{"s":{"type":"array","items":{"type":"string","maxLength":3}}},"additionalProperties":false}`, "output_schema.properties.s.items.maxLength"},
		{"open object", `{"type":"object","properties":{"a":{"type":"string"}}}`, "output_schema.additionalProperties"},
		{"minItems 2", `{"type":"array","minItems":2,"items":{"type":"string"}}`, "output_schema.minItems"},
		{"format", `{"type":"string","format":"regex"}`, "output_schema.format"},
		{"recursive", `{"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"additionalProperties":false}},"$ref":"#/$defs/node"}`, "output_schema"},
		{"shared ref is fine", `{"$defs":{"s":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/$defs/s"},"b":{"$ref":"#/$defs/s"}},"additionalProperties":false}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			err = s.CheckDialect("Amazon Bedrock batch", d)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *job.FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, tc.field) || !strings.Contains(fe.Reason, "Amazon Bedrock batch") {
				t.Fatalf("err = %v, want a refusal on %s naming the API", err, tc.field)
			}
		})
	}
}

func TestCategories(t *testing.T) {
	raw, err := Categories([]string{"billing", "bug"}, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, v := s.Check(`{"category":"bug"}`); v != nil {
		t.Errorf("conforming answer refused: %v", v)
	}
	if _, v := s.Check(`{"category":"feature"}`); v == nil || v.Path != "/category" {
		t.Errorf("out-of-list category = %+v", v)
	}
	for _, tc := range []struct {
		cats  []string
		field string
	}{
		{nil, "categories"},
		{[]string{"a", ""}, "categories[1]"},
		{[]string{"a", "a"}, "categories[1]"},
		{[]string{strings.Repeat("x", MaxCategoryLen+1)}, "categories[0]"},
		{make([]string, MaxCategories+1), "categories"},
	} {
		_, err := Categories(tc.cats, true)
		var fe *job.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("Categories(%d cats) = %v, want a refusal on %s", len(tc.cats), err, tc.field)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
