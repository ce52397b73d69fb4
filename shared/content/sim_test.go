package content

// What the renderers produce is accepted by the simulators (which keep their
// own rules), and the image demonstrably arrives.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	rt "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	rttypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/mcpbatch/mcpbatch/shared/sim"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

func TestRenderedBodiesThroughSimulator(t *testing.T) {
	s := &simbedrock.RuntimeSim{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := rt.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("sim", "sim", "")},
		func(o *rt.Options) {
			o.BaseEndpoint = aws.String(url)
			o.RetryMaxAttempts = 1
			o.HTTPClient = sim.HTTPClient()
		})
	ctx := context.Background()
	png := mkPNG(t, 64, 48)
	webp := mkWebP(30, 20, [4]uint8{255, 1, 2, 3})
	store := &Store{Opener: &memOpener{objs: map[string][]byte{prefix + "a.webp": webp, prefix + "inv.pdf": mkPDF(2, 0, "")}}, Prefix: prefix}
	const model = "us.anthropic.claude-haiku-4-5-20251001-v1:0"

	t.Run("converse", func(t *testing.T) {
		ch, _ := NewChecker(PathBedrockConverse, model, multimodal, store)
		rec, ps := ch.CheckRecord(ctx, 0, "r0", mustJSON(t, userMsg(imgBlock("image/png", png), s3Block("image", prefix+"a.webp"),
			map[string]any{"type": "document", "name": "Invoice", "source": map[string]any{"type": "s3", "uri": prefix + "inv.pdf"}},
			map[string]any{"type": "text", "text": "describe"})))
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		msgs, err := (&Renderer{Path: PathBedrockConverse, Store: store}).ConverseMessages(ctx, rec.Messages)
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Converse(ctx, &rt.ConverseInput{ModelId: aws.String(model), Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		text := out.Output.(*rttypes.ConverseOutputMemberMessage).Value.Content[0].(*rttypes.ContentBlockMemberText).Value
		want := fmt.Sprintf("saw image/png 64x48, %d bytes; image/webp 30x20, %d bytes; application/pdf 2 pages", len(png), len(webp))
		if !strings.Contains(text, want) {
			t.Fatalf("answer %q, want %q", text, want)
		}
	})

	t.Run("claude native body", func(t *testing.T) {
		ch, _ := NewChecker(PathBedrockBatchClaude, model, multimodal, store)
		rec, ps := ch.CheckRecord(ctx, 0, "r0", mustJSON(t, userMsg(s3Block("image", prefix+"a.webp"), map[string]any{"type": "text", "text": "describe"})))
		if len(ps) > 0 {
			t.Fatal(ps)
		}
		var body strings.Builder
		body.WriteString(`{"anthropic_version":"bedrock-2023-05-31","max_tokens":300,"messages":`)
		if err := (&Renderer{Path: PathBedrockBatchClaude, Store: store}).WriteMessages(ctx, &body, rec.Messages); err != nil {
			t.Fatal(err)
		}
		body.WriteString("}")
		out, err := c.InvokeModel(ctx, &rt.InvokeModelInput{ModelId: aws.String(model), Body: []byte(body.String()), ContentType: aws.String("application/json")})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("saw image/webp 30x20, %d bytes", len(webp)); !strings.Contains(string(out.Body), want) {
			t.Fatalf("body %s, want %q", out.Body, want)
		}
	})

	t.Run("text-only model refused on both sides", func(t *testing.T) {
		const micro = "us.amazon.nova-micro-v1:0"
		ch, _ := NewChecker(PathBedrockConverse, micro, []string{"text"}, store)
		rec, _ := Parse(0, "r0", mustJSON(t, userMsg(imgBlock("image/png", png))))
		if err := ch.Validate(ctx, rec); err == nil || !strings.Contains(err.Error(), "does not accept image input") {
			t.Fatalf("product check: %v", err)
		}
		// sent anyway (checked for a model that reads images), the service refuses it too
		ch.Modalities = multimodal
		if err := ch.Validate(ctx, rec); err != nil {
			t.Fatal(err)
		}
		msgs, _ := (&Renderer{Path: PathBedrockConverse}).ConverseMessages(ctx, rec.Messages)
		_, err := c.Converse(ctx, &rt.ConverseInput{ModelId: aws.String(micro), Messages: msgs})
		if err == nil || !strings.Contains(err.Error(), "doesn't support the image content block") {
			t.Fatalf("simulator: %v", err)
		}
	})
}
