package bedrock_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	types "github.com/aws/aws-sdk-go-v2/service/bedrock/types"
	rt "github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	rttypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
	simbedrock "github.com/mcpbatch/mcpbatch/shared/sim/bedrock"
)

func testPNG(t *testing.T, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func testJPEG(t *testing.T, w, h int) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	img.Set(1, 1, color.White)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// testPDF is a one-line, n-page PDF with a correct xref table.
func testPDF(n int) []byte {
	var b bytes.Buffer
	var offs []int
	obj := func(s string) { offs = append(offs, b.Len()); fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), s) }
	b.WriteString("%PDF-1.4\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	var kids []string
	for i := range n {
		kids = append(kids, fmt.Sprintf("%d 0 R", 3+i))
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), n))
	for range n {
		obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>")
	}
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offs)+1, x)
	return b.Bytes()
}

func converseWith(c *rt.Client, model string, blocks ...rttypes.ContentBlock) (*rt.ConverseOutput, error) {
	return c.Converse(context.Background(), &rt.ConverseInput{ModelId: aws.String(model), Messages: []rttypes.Message{{
		Role: rttypes.ConversationRoleUser, Content: append(blocks, &rttypes.ContentBlockMemberText{Value: "describe"}),
	}}})
}

func imageBlock(format rttypes.ImageFormat, b []byte) rttypes.ContentBlock {
	return &rttypes.ContentBlockMemberImage{Value: rttypes.ImageBlock{Format: format, Source: &rttypes.ImageSourceMemberBytes{Value: b}}}
}

func docBlock(format rttypes.DocumentFormat, name string, b []byte) rttypes.ContentBlock {
	return &rttypes.ContentBlockMemberDocument{Value: rttypes.DocumentBlock{Format: format, Name: aws.String(name), Source: &rttypes.DocumentSourceMemberBytes{Value: b}}}
}

func answerText(out *rt.ConverseOutput) string {
	return out.Output.(*rttypes.ConverseOutputMemberMessage).Value.Content[0].(*rttypes.ContentBlockMemberText).Value
}

func TestConverseMedia(t *testing.T) {
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	const haiku, novaMicro = "us.anthropic.claude-haiku-4-5-20251001-v1:0", "us.amazon.nova-micro-v1:0"
	img := testPNG(t, 64, 48)
	pdf := testPDF(3)

	// Claude reads a PDF visually on Converse only with citations on.
	cited := docBlock(rttypes.DocumentFormatPdf, "Invoice (March)", pdf)
	cited.(*rttypes.ContentBlockMemberDocument).Value.Citations = &rttypes.CitationsConfig{Enabled: aws.Bool(true)}
	out, err := converseWith(c, haiku, imageBlock(rttypes.ImageFormatPng, img), cited)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := converseWith(c, haiku, docBlock(rttypes.DocumentFormatPdf, "Invoice (March)", pdf))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := answerText(plain), "application/pdf 3 pages as extracted text"; !strings.Contains(got, want) {
		t.Errorf("without citations: answer %q does not show %q", got, want)
	}
	if in := aws.ToInt32(plain.Usage.InputTokens); in >= 3*1500 {
		t.Errorf("without citations: %d input tokens, want the text-extraction estimate (under %d)", in, 3*1500)
	}
	want := fmt.Sprintf("saw image/png 64x48, %d bytes; application/pdf 3 pages, %d bytes", len(img), len(pdf))
	if got := answerText(out); !strings.Contains(got, want) {
		t.Fatalf("answer %q does not show %q", got, want)
	}
	if in := aws.ToInt32(out.Usage.InputTokens); in < 64*48/750+3*1500 {
		t.Errorf("input tokens %d do not count the image and pages", in)
	}

	refusals := []struct {
		name, model string
		blocks      []rttypes.ContentBlock
		want        string
	}{
		{"image to a text-only model", novaMicro, []rttypes.ContentBlock{imageBlock(rttypes.ImageFormatPng, img)},
			"This model doesn't support the image content block that you provided. Update the content block and try again."},
		{"document to an image-only model", "us.meta.llama3-2-11b-instruct-v1:0", []rttypes.ContentBlock{docBlock(rttypes.DocumentFormatTxt, "notes", []byte("x"))},
			"This model doesn't support the document content block that you provided."},
		{"format contradicted by bytes", haiku, []rttypes.ContentBlock{imageBlock(rttypes.ImageFormatJpeg, img)},
			"The image was specified using the image/jpeg media type, but the image appears to be a image/png image"},
		{"truncated image", haiku, []rttypes.ContentBlock{imageBlock(rttypes.ImageFormatJpeg, testJPEG(t, 50, 50)[:200])},
			"Could not process image"},
		{"over 8000 px", haiku, []rttypes.ContentBlock{imageBlock(rttypes.ImageFormatPng, testPNG(t, 8001, 1))},
			"the maximum height and width are 8000 px"},
		{"over 3.75 MB", haiku, []rttypes.ContentBlock{imageBlock(rttypes.ImageFormatPng, append(bytes.Clone(img), make([]byte, 3_750_001)...))},
			"the maximum image size is 3.75 MB"},
		{"21 images", haiku, func() []rttypes.ContentBlock {
			var bs []rttypes.ContentBlock
			for range 21 {
				bs = append(bs, imageBlock(rttypes.ImageFormatPng, testPNG(t, 2, 2)))
			}
			return bs
		}(), "you can include up to 20 images"},
		{"bad document name", haiku, []rttypes.ContentBlock{docBlock(rttypes.DocumentFormatTxt, "notes.txt", []byte("x"))},
			"The document file name can only contain alphanumeric characters"},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			_, err := converseWith(c, r.model, r.blocks...)
			if msg := validationMessage(t, err); !strings.Contains(msg, r.want) {
				t.Fatalf("message %q, want %q", msg, r.want)
			}
		})
	}
}

func claudeBody(content string) string {
	return `{"anthropic_version":"bedrock-2023-05-31","max_tokens":200,"messages":[{"role":"user","content":[` + content + `,{"type":"text","text":"describe"}]}]}`
}

func claudeImage(mt string, b []byte) string {
	return fmt.Sprintf(`{"type":"image","source":{"type":"base64","media_type":%q,"data":%q}}`, mt, base64.StdEncoding.EncodeToString(b))
}

func TestInvokeClaudeNativeMedia(t *testing.T) {
	c := newRuntime(t, &simbedrock.RuntimeSim{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	const sonnet = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	img := testJPEG(t, 40, 30)
	out, err := invoke(c, sonnet, claudeBody(claudeImage("image/jpeg", img)))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("saw image/jpeg 40x30, %d bytes", len(img)); !bytes.Contains(out.Body, []byte(want)) {
		t.Fatalf("body %s does not show %q", out.Body, want)
	}
	cases := []struct{ name, model, body, want string }{
		{"text-only Claude 3.5 Haiku", "us.anthropic.claude-3-5-haiku-20241022-v1:0", claudeBody(claudeImage("image/jpeg", img)), "doesn't support the image content block"},
		{"media type contradicted", sonnet, claudeBody(claudeImage("image/png", img)), "messages.0.content.0.image.source.base64.data: Image does not match the provided media type image/png"},
		{"unsupported media type", sonnet, claudeBody(claudeImage("image/bmp", img)), "Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"},
		{"corrupt", sonnet, claudeBody(claudeImage("image/png", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 30)...))), "Could not process image"},
		{"document in the native body", sonnet, claudeBody(fmt.Sprintf(`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":%q}}`, base64.StdEncoding.EncodeToString(testPDF(1)))), "document blocks are not supported in the InvokeModel request body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := invoke(c, tc.model, tc.body)
			if msg := validationMessage(t, err); !strings.Contains(msg, tc.want) {
				t.Fatalf("message %q, want %q", msg, tc.want)
			}
		})
	}
}

func TestBedrockBatchClaudeImages(t *testing.T) {
	e := newEnv(t, nil)
	img := testPNG(t, 64, 48)
	e.put(t, inputURI, records(100, func(i int) string {
		mt := "image/png"
		if i%10 == 0 {
			mt = "image/gif" // contradicted by the bytes: that record alone fails
		}
		return claudeBody(claudeImage(mt, img))
	}))
	arn := e.createTyped(t, "mcpbatch-img", "us.anthropic.claude-haiku-4-5-20251001-v1:0", "")
	if err := e.sim.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := e.get(t, arn); g.Status != types.ModelInvocationJobStatusCompleted || aws.ToInt64(g.ErrorRecordCount) != 10 {
		t.Fatalf("status %s, %d errors (%s)", g.Status, aws.ToInt64(g.ErrorRecordCount), aws.ToString(g.Message))
	}
	want := fmt.Sprintf("saw image/png 64x48, %d bytes", len(img))
	ok := 0
	for _, l := range e.rawLines(t, arn) {
		if errObj, bad := l["error"]; bad {
			if msg := fmt.Sprint(get(errObj, "errorMessage")); !strings.Contains(msg, "Image does not match the provided media type image/gif") {
				t.Errorf("error line %v", errObj)
			}
			continue
		}
		if txt := fmt.Sprint(get(l["modelOutput"], "content", 0, "text")); !strings.Contains(txt, want) {
			t.Errorf("answer %q does not show %q", txt, want)
		}
		ok++
	}
	if ok != 90 {
		t.Fatalf("%d answered records, want 90", ok)
	}
}

func TestAnthropicBatchMedia(t *testing.T) {
	s := &simanthropic.AnthropicSim{APIKey: "k", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := anthropic.NewClient(option.WithAPIKey("k"), option.WithBaseURL(url), option.WithMaxRetries(0))
	img, pdf := testPNG(t, 30, 20), testPDF(2)
	b64 := base64.StdEncoding.EncodeToString
	req := func(id string, blocks ...anthropic.ContentBlockParamUnion) anthropic.MessageBatchNewParamsRequest {
		return anthropic.MessageBatchNewParamsRequest{CustomID: id, Params: anthropic.MessageBatchNewParamsRequestParams{
			Model: "claude-sonnet-4-5", MaxTokens: 300,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(append(blocks, anthropic.NewTextBlock("what is this?"))...)},
		}}
	}
	b, err := c.Messages.Batches.New(context.Background(), anthropic.MessageBatchNewParams{Requests: []anthropic.MessageBatchNewParamsRequest{
		req("ok", anthropic.NewImageBlockBase64("image/png", b64(img)), anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: b64(pdf)})),
		req("mismatch", anthropic.NewImageBlockBase64("image/jpeg", b64(img))),
		req("tooBig", anthropic.NewImageBlockBase64("image/png", b64(append(bytes.Clone(img), make([]byte, 4_000_000)...)))),
		req("tooManyPages", anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: b64(testPDF(101))})),
	}})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	stream := c.Messages.Batches.ResultsStreaming(context.Background(), b.ID, anthropic.MessageBatchResultsParams{})
	got := map[string]anthropic.MessageBatchResultUnion{}
	for stream.Next() {
		got[stream.Current().CustomID] = stream.Current().Result
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("saw image/png 30x20, %d bytes; application/pdf 2 pages, %d bytes", len(img), len(pdf))
	if r := got["ok"]; r.Type != "succeeded" || !strings.Contains(r.Message.Content[0].Text, want) {
		t.Fatalf("ok: %s %q (%s), want %q", r.Type, r.Message.Content[0].Text, r.Error.Error.Message, want)
	}
	for id, msg := range map[string]string{
		"mismatch":     "messages.0.content.0.image.source.base64.data: Image does not match the provided media type image/jpeg",
		"tooBig":       "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum",
		"tooManyPages": "A maximum of 100 PDF pages may be provided.",
	} {
		if r := got[id]; r.Type != "errored" || r.Error.Error.Type != "invalid_request_error" || !strings.Contains(r.Error.Error.Message, msg) {
			t.Errorf("%s: %s %s %q, want invalid_request_error %q", id, r.Type, r.Error.Error.Type, r.Error.Error.Message, msg)
		}
	}
}
