package jsonl

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestEachMember(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`{}`, nil},
		{` { } `, nil},
		{`null`, nil},
		{`[{"a":1}]`, nil},
		{`{"id":"x","prompt":"p"}`, []string{"id=\"x\"", "prompt=\"p\""}},
		{` {"a" : 1 , "b":-2.5e3,"c":true ,"d":null} `, []string{"a=1", "b=-2.5e3", "c=true", "d=null"}},
		{`{"a":{"x":[1,{"y":"}"}],"z":"]"},"b":[[],{}],"c":"q\"},\"d\":1"}`,
			[]string{`a={"x":[1,{"y":"}"}],"z":"]"}`, "b=[[],{}]", `c="q\"},\"d\":1"`}},
		{`{"s\"k":1,"\u0069d":"x","":2}`, []string{`s\"k=1`, `\u0069d="x"`, "=2"}},
		{"{\"a\":\"\\\\\",\"b\":1\n}", []string{`a="\\"`, "b=1"}},
	}
	for _, tc := range tests {
		if !json.Valid([]byte(tc.in)) {
			t.Fatalf("%s: not valid JSON (EachKey takes valid JSON only)", tc.in)
		}
		var got []string
		EachMember([]byte(tc.in), func(k, v []byte) bool { got = append(got, string(k)+"="+string(v)); return true })
		if !slices.Equal(got, tc.want) {
			t.Errorf("EachMember(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var first []string
	EachMember([]byte(`{"a":1,"b":2}`), func(k, _ []byte) bool { first = append(first, string(k)); return false })
	if !slices.Equal(first, []string{"a"}) {
		t.Errorf("stopped walk gave %q, want [a]", first)
	}
}

// Against encoding/json on the fuzz corpus of valid objects: each member's
// key and value are the object's.
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"b":[1,"]"]},"c":"\""}`, `{"x":[{"y":{}}],"z":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		n, last := 0, map[string]string{}
		EachMember([]byte(s), func(k, v []byte) bool {
			var key string
			if err := json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &key); err != nil {
				t.Fatalf("%s: key %q is not a JSON string's text", s, k)
			}
			if _, ok := m[key]; !ok {
				t.Fatalf("%s: key %q is not a key of the object", s, key)
			}
			last[key] = string(v)
			n++
			return true
		})
		for key, v := range last { // the last of a repeated key is the one kept
			if v != string(m[key]) {
				t.Fatalf("%s: %q's value %q, encoding/json has %q", s, key, v, m[key])
			}
		}
		if n < len(m) {
			t.Fatalf("%s: %d keys, the object has %d", s, n, len(m))
		}
	})
}
