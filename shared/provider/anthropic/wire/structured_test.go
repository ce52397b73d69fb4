package wire_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
)

// A request for a model with native structured outputs carries
// output_config.format; one without has the schema in its system prompt.
func TestEncodeOutputSchema(t *testing.T) {
	schema := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`
	p := job.Params{OutputSchema: schema}
	for _, tc := range []struct {
		model  string
		native bool
	}{{"claude-haiku-4-5", true}, {"claude-sonnet-4-0", false}} {
		line, err := wire.EncodeRecordAt(0, tc.model, job.Input{ID: "r0", Prompt: "hi"}, p)
		if err != nil {
			t.Fatal(err)
		}
		var l struct {
			Params struct {
				System       []struct{ Text string }
				OutputConfig *struct {
					Format struct {
						Type   string
						Schema json.RawMessage
					}
				} `json:"output_config"`
			}
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatal(err)
		}
		switch oc := l.Params.OutputConfig; {
		case tc.native && (oc == nil || oc.Format.Type != "json_schema" || string(oc.Format.Schema) != schema || len(l.Params.System) != 0):
			t.Errorf("%s: native request %s", tc.model, line)
		case !tc.native && (oc != nil || len(l.Params.System) != 1 || !strings.Contains(l.Params.System[0].Text, schema)):
			t.Errorf("%s: prompted request %s", tc.model, line)
		}
	}
}
