package outschema

import (
	"math"
	"slices"
)

// fastNode is a schema in the small subset that classification schemas
// (and the categories shortcut) are written in: type, properties,
// required, additionalProperties true/false, a string enum, items, and
// annotations. Checking an output against it costs a fraction of the
// library's validation, which keeps its error paths and messages: the
// fast check only ever says "conforms"; whatever it does not accept goes
// to the library, which decides. So it must never accept what the library
// refuses, and it is built only from the keywords below.
type fastNode struct {
	types    []string // nil: any type
	props    map[string]*fastNode
	required []string
	closed   bool // additionalProperties: false
	enum     []string
	hasEnum  bool
	items    *fastNode
}

// annotations are keywords that never fail a value (JSON Schema 2020-12
// core §8.3 and validation §9).
var annotations = map[string]bool{"$schema": true, "$comment": true, "title": true, "description": true, "default": true, "examples": true, "deprecated": true, "readOnly": true, "writeOnly": true}

// fastFrom is the fast form of a schema document (from
// jsonschema.UnmarshalJSON), or nil when it uses anything else.
func fastFrom(doc any) *fastNode {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	n := &fastNode{}
	for k, v := range obj {
		switch {
		case annotations[k]:
		case k == "type":
			if t, ok := v.(string); ok {
				n.types = []string{t}
			} else if n.types, ok = stringList(v); !ok {
				return nil
			}
			for _, t := range n.types {
				if !slices.Contains([]string{"object", "array", "string", "number", "integer", "boolean", "null"}, t) {
					return nil
				}
			}
		case k == "properties":
			ps, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			n.props = make(map[string]*fastNode, len(ps))
			for name, p := range ps {
				if n.props[name] = fastFrom(p); n.props[name] == nil {
					return nil
				}
			}
		case k == "required":
			if n.required, ok = stringList(v); !ok {
				return nil
			}
		case k == "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			n.closed = !b
		case k == "enum":
			if n.enum, ok = stringList(v); !ok {
				return nil
			}
			n.hasEnum = true
		case k == "items":
			if n.items = fastFrom(v); n.items == nil {
				return nil
			}
		default:
			return nil
		}
	}
	return n
}

// stringList is v as a list of strings; ok false when it is anything else.
func stringList(v any) (list []string, ok bool) {
	es, ok := v.([]any)
	if !ok {
		return nil, false
	}
	list = make([]string, 0, len(es))
	for _, e := range es {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		list = append(list, s)
	}
	return list, true
}

// conforms says v surely conforms; false is "ask the library".
func (n *fastNode) conforms(v any) bool {
	if n.types != nil && !n.typed(v) {
		return false
	}
	if n.hasEnum {
		s, ok := v.(string)
		if !ok || !slices.Contains(n.enum, s) {
			return false
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for _, r := range n.required {
			if _, ok := t[r]; !ok {
				return false
			}
		}
		for k, e := range t {
			p, ok := n.props[k]
			switch {
			case ok:
				if !p.conforms(e) {
					return false
				}
			case n.closed:
				return false
			}
		}
	case []any:
		if n.items != nil {
			for _, e := range t {
				if !n.items.conforms(e) {
					return false
				}
			}
		}
	}
	return true
}

// maxExactInt is 2^53: below it a float64 is an integer exactly when it
// has no fraction; above, the library's decimal test decides.
const maxExactInt = 1 << 53

func (n *fastNode) typed(v any) bool {
	for _, want := range n.types {
		switch t := v.(type) {
		case map[string]any:
			if want == "object" {
				return true
			}
		case []any:
			if want == "array" {
				return true
			}
		case string:
			if want == "string" {
				return true
			}
		case float64:
			if want == "number" || want == "integer" && math.Abs(t) < maxExactInt && t == math.Trunc(t) {
				return true
			}
		case bool:
			if want == "boolean" {
				return true
			}
		case nil:
			if want == "null" {
				return true
			}
		}
	}
	return false
}
