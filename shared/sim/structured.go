package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Structured outputs, as the simulators answer them. A request asks for
// JSON conforming to a schema in one of two ways:
//   - natively: Converse's outputConfig.textFormat (a json_schema whose
//     jsonSchema.schema is the schema as a JSON string) or the Messages API's
//     output_config.format {type: json_schema, schema}; the answer then
//     conforms by construction (constrained decoding), except where the
//     providers say it may not: an answer cut at max_tokens is incomplete
//     JSON (https://platform.claude.com/docs/en/build-with-claude/structured-outputs,
//     read 2026-12-03);
//   - in the prompt: a system prompt holding the schema between
//     <output_schema> and </output_schema> (the suite's instruction); a
//     prompted model may answer off-schema.
//
// Violations decides, per distinct request text, which answers go wrong:
// a share Rate of the texts, the first time each is asked only (a model
// asked again samples again), so a retry of the failed records conforms.

// Violations is the configurable share of structured answers that go
// wrong (nil or Rate 0: none).
type Violations struct {
	Rate float64
	mu   sync.Mutex
	seen map[[32]byte]bool
}

// Violate reports whether the answer to key goes wrong this time.
func (v *Violations) Violate(key string) bool {
	if v == nil || v.Rate <= 0 {
		return false
	}
	h := sha256.Sum256([]byte(key))
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.seen == nil {
		v.seen = map[[32]byte]bool{}
	}
	if v.seen[h] {
		return false
	}
	v.seen[h] = true
	return float64(binary.BigEndian.Uint32(h[:4]))/float64(1<<32) < v.Rate
}

// PromptedSchema finds the schema a system prompt asks for (nil: none).
func PromptedSchema(system string) any {
	_, rest, ok := strings.Cut(system, "<output_schema>")
	if !ok {
		return nil
	}
	body, _, ok := strings.Cut(rest, "</output_schema>")
	if !ok {
		return nil
	}
	var s any
	if json.Unmarshal([]byte(strings.TrimSpace(body)), &s) != nil {
		return nil
	}
	return s
}

// StructuredAnswer is the answer to a request for schema: conforming JSON,
// or, when wrong, JSON that breaks the schema (prompted) or an answer cut
// short (native: the one way a constrained answer fails its schema).
// cut says the answer stopped at max_tokens.
func StructuredAnswer(schema any, native, wrong bool, prompt string) (text string, cut bool) {
	g := generator{root: schema, prompt: strings.ToLower(prompt)}
	v := g.value(schema, 0)
	b, _ := json.Marshal(v)
	switch {
	case !wrong:
		return string(b), false
	case native:
		return string(b[:len(b)/2]), true
	}
	return string(breakValue(schema, v, &g)), false
}

// breakValue is v changed so that it breaks schema: a required property
// dropped, else a value of the wrong type.
func breakValue(schema, v any, g *generator) []byte {
	s := g.deref(schema)
	if obj, ok := v.(map[string]any); ok {
		if req := strs(s["required"]); len(req) > 0 {
			delete(obj, req[0])
			b, _ := json.Marshal(obj)
			return b
		}
		for k := range obj {
			obj[k] = map[string]any{"unexpected": true}
			b, _ := json.Marshal(obj)
			return b
		}
	}
	if _, isStr := v.(string); isStr {
		return []byte("12345")
	}
	return []byte(`"[simulated] off-schema answer"`)
}

// generator builds a value conforming to a schema, from the parts of JSON
// Schema 2020-12 a structured answer needs.
type generator struct {
	root   any
	prompt string
}

func (g *generator) deref(s any) map[string]any {
	m, _ := s.(map[string]any)
	for range 8 {
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return m
		}
		cur := g.root
		for _, tok := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
			if tok == "" {
				continue
			}
			next, _ := cur.(map[string]any)
			cur = next[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

func (g *generator) value(schema any, depth int) any {
	s := g.deref(schema)
	if s == nil || depth > 12 {
		return nil
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		// The keyword classifier of SimulatedAnswer: the first value the
		// prompt names, else the last.
		for _, x := range e {
			if str, ok := x.(string); ok && str != "" && strings.Contains(g.prompt, strings.ToLower(str)) {
				return x
			}
		}
		return e[len(e)-1]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return g.value(alts[0], depth+1)
		}
	}
	typ := s["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
		for _, t := range ts {
			if t != "null" {
				typ = t
				break
			}
		}
	}
	switch typ {
	case "object":
		props, _ := s["properties"].(map[string]any)
		out := map[string]any{}
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			out[n] = g.value(props[n], depth+1)
		}
		return out
	case "array":
		n := 1
		if mi, ok := s["minItems"].(float64); ok && int(mi) > n {
			n = int(mi)
		}
		if ma, ok := s["maxItems"].(float64); ok && int(ma) < n {
			n = int(ma)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(s["items"], depth+1)
		}
		return out
	case "number", "integer":
		x := 0.9
		if typ == "integer" {
			x = 1
		}
		if lo, ok := s["minimum"].(float64); ok && x < lo {
			x = lo
		}
		if hi, ok := s["maximum"].(float64); ok && x > hi {
			x = hi
		}
		return x
	case "boolean":
		return true
	case "null":
		return nil
	case "string":
		return g.str(s)
	}
	return "[simulated]"
}

// formats are sample values of the string formats a schema may name.
var formats = map[string]string{
	"date-time": "2026-12-03T10:00:00Z", "date": "2026-12-03", "time": "10:00:00Z", "duration": "PT1H",
	"email": "sim@example.com", "hostname": "example.com", "uri": "https://example.com/sim",
	"ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "uuid": "00000000-0000-4000-8000-000000000000",
}

func (g *generator) str(s map[string]any) string {
	if f, ok := s["format"].(string); ok && formats[f] != "" {
		return formats[f]
	}
	out := "[simulated] " + firstWords(g.prompt, 8)
	if hi, ok := s["maxLength"].(float64); ok && len(out) > int(hi) {
		out = out[:int(hi)]
	}
	if lo, ok := s["minLength"].(float64); ok && len(out) < int(lo) {
		out += strings.Repeat("x", int(lo)-len(out))
	}
	return out
}

func strs(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, x := range items {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// NativeSchema reads the schema a native format carries: Converse's is a
// JSON string, the Messages API's an object.
func NativeSchema(raw json.RawMessage) (any, error) {
	var s any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	if str, ok := s.(string); ok {
		if err := json.Unmarshal([]byte(str), &s); err != nil {
			return nil, fmt.Errorf("schema is not valid JSON: %v", err)
		}
	}
	if _, ok := s.(map[string]any); !ok {
		return nil, fmt.Errorf("schema must be a JSON object")
	}
	return s, nil
}
