package content

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseShapes(t *testing.T) {
	tool := `{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"a]}\"{["}],"is_error":false,"n":-1.5e3}`
	in := `[ {"role":"user","extra":{"a":[1,2,{"b":null}]},"content":[` +
		`{"type":"text","text":"quote \" backslash \\ tab \t uni \u00e9 \ud83d\ude00"},` + tool + `,` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD\nREVG"},"cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"assistant","content":"ok \\\\"} ]`
	rec, err := Parse(2, "p", json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	var std []struct {
		Content any `json:"content"`
	}
	if err := json.Unmarshal([]byte(in), &std); err != nil {
		t.Fatal(err)
	}
	want := std[0].Content.([]any)[0].(map[string]any)["text"].(string)
	b := rec.Messages[0].Blocks
	if b[0].Text != want {
		t.Fatalf("text %q, want %q", b[0].Text, want)
	}
	if b[1].Kind != KindOther || string(b[1].Raw) != tool {
		t.Fatalf("other block %q", b[1].Raw)
	}
	if b[2].Data != "QUJDREVG" || string(b[2].CacheControl) != `{"type":"ephemeral"}` {
		t.Fatalf("image %+v", b[2])
	}
	if rec.Messages[1].Role != "assistant" || rec.Messages[1].Blocks[0].Text != `ok \\` {
		t.Fatalf("assistant %+v", rec.Messages[1])
	}
}

func TestParseRefuses(t *testing.T) {
	cases := map[string]string{
		`{"role":"user"}`:                                                                            "must be an array",
		`[{"role":"user","content":5}]`:                                                              "records[0].messages[0].content: must be a string or an array",
		`[{"role":"user","content":[5]}]`:                                                            "records[0].messages[0].content[0]: must be a content block object",
		`[{"role":"user","content":[{"text":"x"}]}]`:                                                 `"type" is required`,
		`[{"role":"user","content":[{"type":"text"}]}]`:                                              `text block needs "text"`,
		`[{"role":"user","content":"unterminated]`:                                                   "unterminated string",
		`[{"role":"user","content":"a"}] x`:                                                          "trailing data",
		`[{"role":"user","content":"a" "b"}]`:                                                        "expected , or }",
		`[{"role":"user","x":tru,"content":"a"}]`:                                                    "bad value",
		"[{\"role\":\"user\",\"content\":\"a\x01\"}]":                                                "control character",
		`[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"QQ=="}}]}]`:    "media_type is required",
		`[{"role":"user","content":[{"type":"document","source":{"type":"s3","uri":"https://x"}}]}]`: "must be an s3:// URI",
	}
	for in, want := range cases {
		_, err := Parse(0, "", json.RawMessage(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
}

func TestB64Reader(t *testing.T) {
	data := noisePNG(t, 150_000) // spans several chunks
	if err := iotest.TestReader(newB64Reader(b64(data)), data); err != nil {
		t.Fatal(err)
	}
	bad := b64(data)
	bad = bad[:100_000] + "*" + bad[100_001:]
	_, err := io.ReadAll(newB64Reader(bad))
	var ce base64.CorruptInputError
	if !errors.As(err, &ce) || int64(ce) != 100_000 {
		t.Fatalf("err = %v, want corrupt input at 100000", err)
	}
}
