package local_test

import (
	"strings"
	"testing"
)

// TestSubmitRefusesWhatWouldGoSilentlyWrong: inputs that were accepted and
// then dropped, defaulted or failed at run time are refused at submit, with
// the field named and the way out said.
func TestSubmitRefusesWhatWouldGoSilentlyWrong(t *testing.T) {
	s := newSuite(t)
	cs := s.client("alice")
	msgs := func(n int, m string) []map[string]any {
		out := make([]map[string]any, n)
		for i := range out {
			out[i] = map[string]any{"messages": rawJSON(m)}
		}
		return out
	}
	video := `[{"role":"user","content":[{"type":"video","source":{"type":"base64","media_type":"video/mp4","data":"AAAA"}},{"type":"text","text":"what happens?"}]}]`
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"role robot on demand", map[string]any{"model": haiku, "records": msgs(2, `[{"role":"user","content":"hi"},{"role":"robot","content":"x"},{"role":"user","content":"again"}]`)},
			[]string{"records[0].messages[1].role", `"robot"`, "user", "assistant"}},
		{"content 5 on demand", map[string]any{"model": haiku, "records": msgs(2, `[{"role":"user","content":5}]`)},
			[]string{"records[0].messages[0].content"}},
		{"video on demand", map[string]any{"model": haiku, "records": msgs(2, video)},
			[]string{"records[0].messages[0].content[0]", "video", "model_input"}},
		{"video in a batch", map[string]any{"model": haiku, "records": msgs(100, video)},
			[]string{"records[0].messages[0].content[0]", "video", "model_input"}},
		{"ttl_days 0", map[string]any{"model": haiku, "records": records(2), "ttl_days": 0},
			[]string{"ttl_days", "1..365", "got 0"}},
		{"empty list", map[string]any{"model": haiku, "records": []any{}},
			[]string{"records", "empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := toolErr(t, cs, "submit_batch", tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, "at least 100") {
				t.Errorf("error %q asks for 100 records", msg)
			}
		})
	}
}
