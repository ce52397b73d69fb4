package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The simulator's structured answers conform to the schema they are asked
// for (checked here with the JSON Schema library itself), the share of
// violations goes wrong once per text, and a native answer goes wrong only
// by being cut short.
func TestStructuredAnswers(t *testing.T) {
	raw := `{"$defs":{"tag":{"type":"string","format":"date"}},"type":"object","properties":{
		"category":{"type":"string","enum":["billing","bug","other"]},
		"score":{"type":"integer","minimum":3,"maximum":5},
		"tags":{"type":"array","minItems":2,"items":{"$ref":"#/$defs/tag"}},
		"note":{"type":["string","null"],"minLength":40},
		"flag":{"anyOf":[{"type":"boolean"},{"type":"null"}]}},
		"required":["category","score","tags"],"additionalProperties":false}`
	var schema any
	if err := json.Unmarshal([]byte(raw), &schema); err != nil {
		t.Fatal(err)
	}
	doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("s.json", doc); err != nil {
		t.Fatal(err)
	}
	compiled, err := c.Compile("s.json")
	if err != nil {
		t.Fatal(err)
	}
	conforms := func(text string) error {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return err
		}
		return compiled.Validate(v)
	}

	text, cut := StructuredAnswer(schema, true, false, "A BUG in the app")
	if err := conforms(text); err != nil || cut {
		t.Fatalf("conforming answer %s: %v (cut %v)", text, err, cut)
	}
	if !strings.Contains(text, `"category":"bug"`) {
		t.Errorf("answer %s does not pick the category the prompt names", text)
	}
	if text, _ := StructuredAnswer(schema, false, true, "x"); conforms(text) == nil || !json.Valid([]byte(text)) {
		t.Errorf("prompted violation %s conforms, or is not JSON", text)
	}
	if text, cut := StructuredAnswer(schema, true, true, "x"); json.Valid([]byte(text)) || !cut {
		t.Errorf("native violation %s should be an answer cut short", text)
	}

	v := &Violations{Rate: 0.3}
	wrong := 0
	for i := range 1000 {
		if v.Violate(strings.Repeat("k", i%50) + string(rune('a'+i/50))) {
			wrong++
		}
		if i < 50 && v.Violate(strings.Repeat("k", i)+"a") {
			t.Fatalf("text %d went wrong twice", i)
		}
	}
	if wrong < 200 || wrong > 400 {
		t.Errorf("%d of 1000 texts went wrong at rate 0.3", wrong)
	}
	if (*Violations)(nil).Violate("x") {
		t.Error("nil Violations went wrong")
	}
}

func TestPromptedSchema(t *testing.T) {
	sys := "Classify.\n\nAnswer with JSON.\n<output_schema>\n{\"type\":\"string\"}\n</output_schema>"
	if s, ok := PromptedSchema(sys).(map[string]any); !ok || s["type"] != "string" {
		t.Errorf("PromptedSchema = %v", PromptedSchema(sys))
	}
	if PromptedSchema("no schema here") != nil {
		t.Error("schema found in a plain prompt")
	}
}
