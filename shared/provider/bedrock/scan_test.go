package bedrock

import (
	"encoding/json"
	"strings"
	"testing"
)

// The scanner must accept exactly what encoding/json accepts.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `""`, `0`, `-0.5e+10`, `true`, `false`, `null`, ` { "a" : [ 1 , { "b" : null } ] } `,
		`"\u00e9\ud83d\ude00\n\"\\\/"`, `{"a":}`, `[1,]`, `01`, `1.`, `"\x"`, "\"a\x01\"", `{"a" 1}`, `[1 2]`,
		`"\ud800"`, `{"a":1}}`, `tru`, `nul`, `-`, `1e`, strings.Repeat("[", 20) + strings.Repeat("]", 20),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		next, err := skipValue(b, 0)
		got := err == nil && skipWS(b, next) == len(b)
		if want := json.Valid(b); got != want {
			t.Errorf("skipValue accepts %q: %v (err %v), json.Valid: %v", b, got, err, want)
		}
	})
}

// Decoded strings must equal encoding/json's, escapes, surrogates and bad UTF-8 included.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r"`, `"\ud800x"`, `"\ud800\u0041"`, `"\udc00\ud800"`, "\"\xff\xfe ok\"", `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, esc, next, err := scanString(b, 0)
		if err != nil || next != len(b) {
			return
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("scanString accepts %q, encoding/json does not: %v", b, err)
		}
		if got := decodeString(raw, esc); got != want {
			t.Errorf("decodeString(%q) = %q, want %q", b, got, want)
		}
	})
}

func FuzzParseOutputLine(f *testing.F) {
	for _, s := range []string{
		`{"recordId":"r1","modelInput":{},"modelOutput":{"type":"message","content":[{"type":"text","text":"a"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}}`,
		`{"recordId":"r4","modelInput":{},"error":{"errorCode":400,"errorMessage":"m"}}`,
		`{"recordId":"r5","error":{"errorCode":"ThrottlingException","errorMessage":"m"}}`,
		`{"recordId":"n1","modelOutput":{"output":{"message":{"content":[{"text":"x"}]}}}}`,
		`{"recordId":"r6","modelInput":{"anthropic_version":"bedrock-2023-05-31","max_tok`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := ParseOutputLine(line)
		if err != nil {
			return
		}
		if !json.Valid(line) {
			t.Errorf("accepted invalid JSON %q", line)
		}
		if rec.ID == "" || rec.Status == "" {
			t.Errorf("accepted %q as %+v", line, rec)
		}
	})
}
