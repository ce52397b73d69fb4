package bedrock_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

// An output schema rides a batch line natively for a model the catalog
// lists (outputConfig.textFormat, the schema as a JSON string), and goes
// into the system prompt of one it does not; model_input cannot take one.
func TestEncodeOutputSchema(t *testing.T) {
	schema := `{"type":"object","properties":{"category":{"type":"string","enum":["a","b"]}},"required":["category"],"additionalProperties":false}`
	p := job.Params{System: "Classify.", OutputSchema: schema}
	in := job.Input{ID: "r0", Prompt: "ticket about a"}
	for _, tc := range []struct {
		id     string
		native bool
	}{{"anthropic.claude-haiku-4-5-20251001-v1:0", true}, {"anthropic.claude-sonnet-4-20250514-v1:0", false}} {
		rules, ok := model.Default().Lookup(tc.id)
		if !ok {
			t.Fatalf("%s not in the catalog", tc.id)
		}
		line, err := bedrock.EncodeRecordFor(0, tc.id, rules, in, p)
		if err != nil {
			t.Fatal(err)
		}
		var l struct {
			ModelInput struct {
				System       []struct{ Text string }
				OutputConfig *struct {
					TextFormat struct {
						Type      string
						Structure struct {
							JSONSchema struct{ Name, Schema string } `json:"jsonSchema"`
						}
					}
				} `json:"outputConfig"`
			} `json:"modelInput"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("%s: %v\n%s", tc.id, err, line)
		}
		sys := l.ModelInput.System[0].Text
		if tc.native {
			oc := l.ModelInput.OutputConfig
			if oc == nil || oc.TextFormat.Type != "json_schema" || oc.TextFormat.Structure.JSONSchema.Schema != schema || sys != "Classify." {
				t.Errorf("%s: native line %s", tc.id, line)
			}
			continue
		}
		if l.ModelInput.OutputConfig != nil || !strings.HasPrefix(sys, "Classify.\n\n") || !strings.Contains(sys, "<output_schema>\n"+schema+"\n</output_schema>") {
			t.Errorf("%s: prompted line %s", tc.id, line)
		}
	}
	_, err := bedrock.EncodeRecordAt(3, "anthropic.claude-haiku-4-5-20251001-v1:0", job.Input{ID: "r3", ModelInput: json.RawMessage(`{"messages":[]}`)}, p)
	if err == nil || !strings.Contains(err.Error(), "records[3].model_input") {
		t.Errorf("model_input with an output schema: %v", err)
	}
}
