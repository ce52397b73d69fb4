package outschema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// decodeCases are outputs decode must read exactly as encoding/json does,
// or hand to it (ok false).
var decodeCases = []string{
	`{"category":"billing","confidence":0.9}`,
	`{ "category" : "bug" ,"confidence": 1 , "tags":[ "a", "b" ] }`,
	"{\n\t\"a\": [1, -2.5e3, 0, 1E+2, true, false, null, {}, []]\r\n}",
	`"just a string"`, `12`, `-0`, `null`, `[]`, `{}`,
	`{"s":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u20AC done","k\u0041":1}`,
	`{"s":"héllo wörld ✓"}`,
	`{"a":1,"a":2}`,
	`{"s":"\ud83d\ude00"}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}",
	`{"n":1e400}`, `{"n":01}`, `{"n":1.}`, `{"n":.5}`, `{"n":-}`, `{"n":1e}`, `{"n":+1}`,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{a:1}`, `{"a":1`, `[1 2]`, `truex`, `tru`, `nul`,
	`{"a":1} {}`, `{"a":1}x`, "{\"s\":\"tab\tinside\"}", `{"s":"\x"}`, `{"s":"\u12"}`, `"unterminated`,
	` {"lead":1}`, `{"trail":1} `, ``, ` `,
}

func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, compact, ok := decode(s)
		var want any
		err := json.Unmarshal([]byte(s), &want)
		if !ok {
			return // encoding/json decides
		}
		if err != nil {
			t.Fatalf("decode took %q, json.Unmarshal refuses it: %v", s, err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("decode(%q) = %#v, json.Unmarshal gives %#v", s, v, want)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(s)); err != nil || buf.String() != compact {
			t.Fatalf("decode(%q) compact = %q, json.Compact gives %q (%v)", s, compact, buf.String(), err)
		}
	})
}

// TestDecodeFastPath: the common outputs stay on the fast path (else the
// benchmark measures encoding/json again).
func TestDecodeFastPath(t *testing.T) {
	for _, s := range decodeCases[:12] {
		if _, _, ok := decode(s); !ok {
			t.Errorf("decode(%q) left the fast path", s)
		}
	}
}

// fastSchemas are schemas in fastNode's subset (fast set) or not.
var fastSchemas = []struct {
	schema string
	fast   bool
}{
	{ticket, true},
	{string(must(Categories([]string{"billing", "bug"}, true))), true},
	{`{"type":["string","null"],"description":"d","title":"t"}`, true},
	{`{"type":"array","items":{"type":"integer"}}`, true},
	{`{"type":"object","properties":{"n":{"type":"number","minimum":0}}}`, false},
	{`{"enum":[1,2]}`, false},
	{`{"type":"object","additionalProperties":{"type":"string"}}`, false},
	{`{"anyOf":[{"type":"string"}]}`, false},
	{`{"$defs":{"s":{"type":"string"}},"$ref":"#/$defs/s"}`, false},
	{`{"type":"string","format":"email"}`, false},
	{`{"type":"object","properties":{"a":true}}`, false},
}

func TestFastFrom(t *testing.T) {
	for _, tc := range fastSchemas {
		s, err := Compile([]byte(tc.schema))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.fast != nil; got != tc.fast {
			t.Errorf("fast path for %s = %v, want %v", tc.schema, got, tc.fast)
		}
	}
}

// FuzzFastConforms: the fast check never takes an output the library
// refuses (it only ever says "conforms").
func FuzzFastConforms(f *testing.F) {
	outputs := []string{
		`{"category":"billing","confidence":0.9}`, `{"category":"bug"}`, `{"category":"refund","confidence":1}`,
		`{"category":"bug","confidence":"high"}`, `{"category":"bug","confidence":1,"tags":["a",1]}`,
		`{"category":"bug","confidence":1,"why":"x"}`, `"x"`, `null`, `[1,2.5,9007199254740993]`, `[1,2,3]`, `[]`,
		`{"category":null,"confidence":1}`, `{}`, `true`, `9007199254740992`, `1e300`,
	}
	for i := range fastSchemas {
		for _, o := range outputs {
			f.Add(i, o)
		}
	}
	schemas := make([]*Schema, len(fastSchemas))
	for i, tc := range fastSchemas {
		schemas[i] = must(Compile([]byte(tc.schema)))
	}
	f.Fuzz(func(t *testing.T, i int, out string) {
		s := schemas[(i%len(schemas)+len(schemas))%len(schemas)]
		var v any
		if s.fast == nil || json.Unmarshal([]byte(out), &v) != nil || !s.fast.conforms(v) {
			return
		}
		if err := s.compiled.Validate(v); err != nil {
			t.Fatalf("fast check took %s for %s; the library refuses it: %v", out, s.raw, err)
		}
	})
}
