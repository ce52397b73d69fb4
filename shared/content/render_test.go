package content

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

var update = flag.Bool("update", false, "rewrite golden files")

func goldenRecord(t *testing.T, path Path) (*Record, *Store, map[string][]byte) {
	objs := map[string][]byte{
		prefix + "tiny.webp": mkWebP(4, 4, [4]uint8{255, 9, 8, 7}),
		prefix + "one.pdf":   mkPDF(1, 0, ""),
	}
	store := &Store{Opener: &memOpener{objs: objs}, Prefix: prefix}
	blocks := []map[string]any{
		{"type": "text", "text": "Describe <both> & \"compare\"", "cache_control": map[string]any{"type": "ephemeral"}},
		imgBlock("image/png", mkPNG(t, 8, 6)),
		s3Block("image", prefix+"tiny.webp"),
	}
	if path != PathBedrockBatchClaude {
		blocks = append(blocks,
			map[string]any{"type": "document", "name": "Invoice (March)", "source": map[string]any{"type": "s3", "uri": prefix + "one.pdf"}},
			docBlock("text/markdown", "", []byte("# Notes\n\"quoted\"\ttab \u00e9\n")))
	}
	msgs := append(userMsg(blocks...), map[string]any{"role": "assistant", "content": "Sure."})
	rec, err := Parse(0, "golden", mustJSON(t, msgs))
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := NewChecker(path, "m", multimodal, store)
	if err := ch.Validate(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return rec, store, objs
}

func TestRenderGolden(t *testing.T) {
	for _, path := range Paths {
		t.Run(string(path), func(t *testing.T) {
			rec, store, objs := goldenRecord(t, path)
			r := &Renderer{Path: path, Store: store}
			got, err := r.Messages(context.Background(), rec.Messages)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(got, &v); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, got)
			}
			var pretty bytes.Buffer
			json.Indent(&pretty, got, "", "  ")
			file := filepath.Join("testdata", "messages-"+string(path)+".golden.json")
			if *update {
				os.WriteFile(file, pretty.Bytes(), 0o644)
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Fatalf("%s differs:\n%s", file, pretty.Bytes())
			}
			// the s3 image really is inside, byte for byte
			if !bytes.Contains(got, []byte(base64.StdEncoding.EncodeToString(objs[prefix+"tiny.webp"]))) {
				t.Fatal("s3 image bytes missing from the output")
			}
		})
	}
}

func TestConverseMessagesSDK(t *testing.T) {
	rec, store, objs := goldenRecord(t, PathBedrockConverse)
	msgs, err := (&Renderer{Path: PathBedrockConverse, Store: store}).ConverseMessages(context.Background(), rec.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || len(msgs[0].Content) != 5 {
		t.Fatalf("got %d messages, %d blocks", len(msgs), len(msgs[0].Content))
	}
	img := msgs[0].Content[2].(*brtypes.ContentBlockMemberImage).Value
	if img.Format != brtypes.ImageFormatWebp || !bytes.Equal(img.Source.(*brtypes.ImageSourceMemberBytes).Value, objs[prefix+"tiny.webp"]) {
		t.Fatalf("webp block %+v", img)
	}
	doc := msgs[0].Content[3].(*brtypes.ContentBlockMemberDocument).Value
	if doc.Format != brtypes.DocumentFormatPdf || *doc.Name != "Invoice (March)" {
		t.Fatalf("pdf block %+v", doc)
	}
	if md := msgs[0].Content[4].(*brtypes.ContentBlockMemberDocument).Value; *md.Name != "document 1-5" || md.Format != brtypes.DocumentFormatMd {
		t.Fatalf("md block %+v", md)
	}
}

func TestRenderRefusesChangedObject(t *testing.T) {
	rec, store, objs := goldenRecord(t, PathBedrockConverse)
	objs[prefix+"tiny.webp"] = mkPNG(t, 4, 4) // swapped after validation
	_, err := (&Renderer{Path: PathBedrockConverse, Store: store}).Messages(context.Background(), rec.Messages)
	if err == nil || !strings.Contains(err.Error(), "changed since it was validated") {
		t.Fatalf("err = %v", err)
	}
}

func TestRenderNeedsCheck(t *testing.T) {
	rec, err := Parse(0, "x", mustJSON(t, userMsg(imgBlock("image/png", mkPNG(t, 2, 2)))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Renderer{Path: PathAnthropic}).Messages(context.Background(), rec.Messages); err == nil || !strings.Contains(err.Error(), "not checked") {
		t.Fatalf("err = %v", err)
	}
}

func TestEstimate(t *testing.T) {
	cases := []struct {
		w, h int
		want int64
	}{
		{200, 200, 54},     // 40000/750 = 53.3
		{1000, 1000, 1334}, // 1e6/750 = 1333.3
		{1092, 1092, 1590}, // the vision page's 1:1 maximum
		{3000, 1500, 1599}, // long edge to 1568 (1568x784 = 1639 tokens), then down to the ~1,600 cap
		{8000, 10, 3},      // 1568x1 (1.96 floors to 1): 1568/750 rounds up to 3
	}
	for _, c := range cases {
		if got := ImageTokens(c.w, c.h); got != c.want {
			t.Errorf("ImageTokens(%d, %d) = %d, want %d", c.w, c.h, got, c.want)
		}
	}
	if got := TextTokens("abcdefghi"); got != 3 {
		t.Errorf("TextTokens = %d", got)
	}

	rec, _, _ := goldenRecord(t, PathAnthropic)
	var s Summary
	s.Add(rec, nil)
	// text 28 chars -> 7, png 8x6 -> 1, webp 4x4 -> 1, pdf 1 page -> 3000,
	// md 22 runes -> 6, assistant "Sure." -> 2
	if s.EstimatedInputTokens != 7+1+1+3000+6+2 {
		t.Errorf("estimate %d", s.EstimatedInputTokens)
	}
	if s.Blocks[KindImage] != 2 || s.Blocks[KindDocument] != 2 || s.Blocks[KindText] != 2 || s.Formats[PDF] != 1 || s.Records != 1 {
		t.Errorf("summary %+v", s)
	}
}
