package summary

import (
	"bytes"
	"encoding/json"
)

// FieldsOf picks from an output schema (JSON Schema text) the fields a
// chart of a job's summary uses: field, the first top-level property with
// an enum (or const), else the first boolean one, to count records by (a
// free-text string would count each record apart); stats, the first number
// or integer property without an enum. Properties are taken in the schema's
// order; "" when none fits or the schema is not an object schema.
func FieldsOf(schema string) (field, stats string) {
	var top struct {
		Properties json.RawMessage `json:"properties"`
	}
	if json.Unmarshal([]byte(schema), &top) != nil || len(top.Properties) == 0 {
		return "", ""
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", ""
	}
	var boolean string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", ""
		}
		name, _ := t.(string)
		var p struct {
			Type  json.RawMessage `json:"type"`
			Enum  []any           `json:"enum"`
			Const any             `json:"const"`
		}
		if err := dec.Decode(&p); err != nil {
			return "", ""
		}
		enum := len(p.Enum) > 0 || p.Const != nil
		switch {
		case enum && field == "":
			field = name
		case !enum && stats == "" && (hasType(p.Type, "number") || hasType(p.Type, "integer")):
			stats = name
		case !enum && boolean == "" && hasType(p.Type, "boolean"):
			boolean = name
		}
	}
	if field == "" {
		field = boolean
	}
	return field, stats
}

// hasType: a schema's type (a name or a list of names) includes name.
func hasType(raw json.RawMessage, name string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == name
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, t := range many {
			if t == name {
				return true
			}
		}
	}
	return false
}
