package batch

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/content"
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
