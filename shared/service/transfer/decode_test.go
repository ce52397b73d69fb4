package transfer

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodeLine takes the fields encoding/json matches (case-insensitively,
// escaped or not) and names the first key that is none of them.
func TestDecodeLine(t *testing.T) {
	tests := []struct {
		line   string
		id     string
		prompt string
		err    string
	}{
		{line: `{"id":"a","prompt":"p"}`, id: "a", prompt: "p"},
		{line: ` {"ID":"a", "Prompt":"p"} `, id: "a", prompt: "p"},
		{line: `{"\u0069d":"a","prompt":"p"}`, id: "a", prompt: "p"},
		{line: `{"recordId":"r1","modelInput":{"messages":[{"role":"user","content":[{"text":"}"}]}]}}`, id: "r1"},
		{line: `{"id":"a","prompt":"p","system":"s"}`, id: "a", prompt: "p"},
		{line: `{"id":"a","prompt":"p","temperature":0.5}`, err: `unknown field "temperature"; a line is {id?`},
		{line: `{"id":"a","meta":{"id":"x"},"prompt":"p"}`, err: `unknown field "meta"`},
		{line: `{"pr\u006fmpts":"p"}`, err: `unknown field "prompts"`},
		{line: `not json`, err: "not a JSON object: invalid character 'o'"},
		{line: `{"id":"a","prompt":"p"`, err: "not a JSON object: unexpected end of JSON input"},
		{line: `{"id":"a","prompt":"p"} {"id":"b"}`, err: "not a JSON object: invalid character '{' after top-level value"},
		{line: `{"id":7,"prompt":"p"}`, err: "not a JSON object: cannot unmarshal number into Go struct field fileRecord.id of type string"},
		{line: `{"id":"a","recordId":"b","modelInput":{}}`, err: "mixes Bedrock's native"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			in, err := decodeLine([]byte(tc.line))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil || in.ID != tc.id || in.Prompt != tc.prompt {
				t.Fatalf("decoded %+v (%v), want id %q prompt %q", in, err, tc.id, tc.prompt)
			}
		})
	}
}

// BenchmarkDecodeLine: one typical line (the allocations of the check phase's parse).
func BenchmarkDecodeLine(b *testing.B) {
	line := []byte(`{"id":"t0-0000001","prompt":"Summarise support ticket 1: the customer reports the export stalls at 80% and asks for a refund"}`)
	b.ReportAllocs()
	for range b.N {
		if _, err := decodeLine(line); err != nil {
			b.Fatal(err)
		}
	}
}

// A line decodePlain takes decodes as json.Unmarshal decodes it, with no
// field json.Decoder's DisallowUnknownFields would refuse.
func FuzzDecodePlain(f *testing.F) {
	for _, s := range []string{`{"id":"a","prompt":"p"}`, `{"ID":"a","Prompt":"p","id":"b"}`, `{"id":null,"prompt":"é"}`,
		`{"recordId":"r","modelInput":{"a":[1]}}`, `{"messages":[{"role":"user","content":"x"}],"system":"s"}`,
		`{"id":"a\"b"}`, `{"id":5}`, `{"x":1}`, `null`, `{"model_input":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var fast fileRecord
		if !fast.decodePlain([]byte(s)) {
			return
		}
		var want fileRecord
		dec := json.NewDecoder(strings.NewReader(s))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("%s: decodePlain took it, json refuses it: %v", s, err)
		}
		if !reflect.DeepEqual(fast, want) {
			t.Fatalf("%s: decodePlain gave %+v, json %+v", s, fast, want)
		}
	})
}

// fileRecord.field(i) is the struct's field i, and every field has one.
func TestFileRecordFields(t *testing.T) {
	var fr fileRecord
	v := reflect.ValueOf(&fr).Elem()
	if len(lineFields) != v.NumField() {
		t.Fatalf("%d line fields, fileRecord has %d", len(lineFields), v.NumField())
	}
	for i := range v.NumField() {
		str, raw := fr.field(i)
		switch {
		case str != nil && v.Field(i).Addr().Interface() != any(str):
			t.Errorf("field(%d) is not fileRecord's field %s", i, v.Type().Field(i).Name)
		case raw != nil && v.Field(i).Addr().Interface() != any(raw):
			t.Errorf("field(%d) is not fileRecord's field %s", i, v.Type().Field(i).Name)
		case str == nil && raw == nil:
			t.Errorf("field(%d) (%s) is missing", i, v.Type().Field(i).Name)
		}
	}
}
