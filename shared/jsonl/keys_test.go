package jsonl

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestEachKey(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`{}`, nil},
		{` { } `, nil},
		{`null`, nil},
		{`[{"a":1}]`, nil},
		{`{"id":"x","prompt":"p"}`, []string{"id", "prompt"}},
		{` {"a" : 1 , "b":-2.5e3,"c":true,"d":null} `, []string{"a", "b", "c", "d"}},
		{`{"a":{"x":[1,{"y":"}"}],"z":"]"},"b":[[],{}],"c":"q\"},\"d\":1"}`, []string{"a", "b", "c"}},
		{`{"s\"k":1,"\u0069d":"x","":2}`, []string{`s\"k`, `\u0069d`, ""}},
		{"{\"a\":\"\\\\\",\"b\":1}", []string{"a", "b"}},
	}
	for _, tc := range tests {
		if !json.Valid([]byte(tc.in)) {
			t.Fatalf("%s: not valid JSON (EachKey takes valid JSON only)", tc.in)
		}
		var got []string
		EachKey([]byte(tc.in), func(k []byte) bool { got = append(got, string(k)); return true })
		if !slices.Equal(got, tc.want) {
			t.Errorf("EachKey(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var first []string
	EachKey([]byte(`{"a":1,"b":2}`), func(k []byte) bool { first = append(first, string(k)); return false })
	if !slices.Equal(first, []string{"a"}) {
		t.Errorf("stopped walk gave %q, want [a]", first)
	}
}

// Against encoding/json on the fuzz corpus of valid objects: the keys in order.
func FuzzEachKey(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"b":[1,"]"]},"c":"\""}`, `{"x":[{"y":{}}],"z":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &m) != nil {
			return
		}
		n := 0
		EachKey([]byte(s), func(k []byte) bool {
			var key string
			if err := json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &key); err != nil {
				t.Fatalf("%s: key %q is not a JSON string's text", s, k)
			}
			if _, ok := m[key]; !ok {
				t.Fatalf("%s: key %q is not a key of the object", s, key)
			}
			n++
			return true
		})
		if n < len(m) {
			t.Fatalf("%s: %d keys, the object has %d", s, n, len(m))
		}
	})
}
