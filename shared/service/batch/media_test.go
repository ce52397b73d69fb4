package batch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// TestRenderedBound: the split measures a record with images or documents by
// renderedBound; it must never be under what the renderer writes, whatever
// the text's escaping.
func TestRenderedBound(t *testing.T) {
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
	img := map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": base64.StdEncoding.EncodeToString(png)}}
	txt := map[string]any{"type": "document", "title": "Notes (v2)", "source": map[string]any{"type": "base64", "media_type": "text/plain",
		"data": base64.StdEncoding.EncodeToString([]byte("quotes \" backslashes \\ tabs \t newlines \n and <html> & \x01 controls"))}}
	for _, path := range content.Paths {
		for name, blocks := range map[string][]any{
			"image":         {img, map[string]any{"type": "text", "text": "\"quoted\"\n\t<b>&</b>\u2028"}},
			"text document": {txt, map[string]any{"type": "text", "text": "plain"}},
		} {
			if path == content.PathBedrockBatchClaude && name == "text document" {
				continue // this path takes no documents
			}
			raw, _ := json.Marshal([]any{map[string]any{"role": "user", "content": blocks}})
			ch, err := content.NewChecker(path, "m", []string{"text", "image", "document"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec, ps := ch.CheckRecord(context.Background(), 0, "x", raw)
			if len(ps) > 0 {
				t.Fatalf("%s %s: %v", path, name, ps[0])
			}
			var out bytes.Buffer
			r := &content.Renderer{Path: path}
			if err := r.WriteMessages(context.Background(), &out, rec.Messages); err != nil {
				t.Fatal(err)
			}
			if b := renderedBound(rec); b < out.Len() {
				t.Errorf("%s %s: bound %d under the rendered %d bytes", path, name, b, out.Len())
			}
		}
	}
}

// A record with an image for a model that takes no system prompt: the
// rendered messages carry the system text first in the first user turn, as
// the encoder's placeholder did, so the fold is not lost when the
// placeholder is replaced; and the placeholder is found whatever shape the
// encoder gave it.
func TestMediaFoldsSystemAndFindsReshapedPlaceholder(t *testing.T) {
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")
	raw, _ := json.Marshal([]any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": base64.StdEncoding.EncodeToString(png)}},
		map[string]any{"type": "text", "text": "What is it?"}}}})
	ch, err := content.NewChecker(content.PathBedrockConverse, "m", []string{"text", "image"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, ps := ch.CheckRecord(context.Background(), 3, "x", raw)
	if len(ps) > 0 {
		t.Fatal(ps[0])
	}
	md := &Media{path: content.PathBedrockConverse, renderer: &content.Renderer{Path: content.PathBedrockConverse},
		noSystem: true, system: "Be brief."}
	// An encoder that reshapes the messages (as the Converse encoder does)
	// and puts a system member after them.
	enc := func(in job.Input) ([]byte, error) {
		var msgs []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(in.Messages, &msgs); err != nil {
			return nil, err
		}
		return []byte(`{"recordId":"r3","modelInput":{"messages":[{"role":"user","content":[{"text":"Be brief."},{"text":"` + msgs[0].Content + `"}]}],"inferenceConfig":{"maxTokens":9}}}`), nil
	}
	for range 2 { // encoding twice folds once
		line, off, size, err := md.Encode(3, job.Input{ID: "r3"}, rec, enc)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		w := bufio.NewWriter(&out)
		if err := md.Write(context.Background(), w, 3, rec, line, off); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		var got struct {
			ModelInput struct {
				Messages []struct {
					Content []map[string]any `json:"content"`
				} `json:"messages"`
				InferenceConfig map[string]any `json:"inferenceConfig"`
			} `json:"modelInput"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%v: %s", err, out.Bytes())
		}
		c := got.ModelInput.Messages[0].Content
		if len(c) != 3 || c[0]["text"] != "Be brief." || c[1]["image"] == nil || c[2]["text"] != "What is it?" || got.ModelInput.InferenceConfig["maxTokens"] != float64(9) {
			t.Fatalf("rendered %s", out.Bytes())
		}
		if out.Len() > size {
			t.Errorf("rendered %d bytes over the bound %d", out.Len(), size)
		}
	}
}
