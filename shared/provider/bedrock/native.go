package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// The output side of InvokeModel jobs, which stay readable: parts stored
// before Bedrock batch jobs became Converse jobs, embedding jobs, and jobs of
// native model_input bodies. New text jobs are Converse jobs (ParseConverseLine);
// no family body is encoded any more.

// nativeOutput is the union of the InvokeModel response shapes of the families
// other than Claude (whose hot path has its own scanner), and of a Converse
// response (Nova's native answer has the Converse shape):
//
//   - Nova and Converse: output.message.content[].text, stopReason, usage.inputTokens/outputTokens
//     (+ cacheReadInputTokens/cacheWriteInputTokens)
//   - Llama: generation, stop_reason, prompt_token_count, generation_token_count
//   - Mistral: outputs[].text, outputs[].stop_reason (no token counts: the manifest has them)
//   - Titan Text: inputTextTokenCount, results[].outputText/tokenCount/completionReason
//   - Titan Text Embeddings: embedding, inputTextTokenCount
//   - Cohere Embed: embeddings (no token counts: the manifest has them)
type nativeOutput struct {
	Output *struct {
		Message struct {
			Content []struct {
				Text *string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string          `json:"stopReason"`
	Usage      json.RawMessage `json:"usage"` // readUsage

	Generation           *string `json:"generation"`
	LlamaStop            string  `json:"stop_reason"`
	PromptTokenCount     *int64  `json:"prompt_token_count"`
	GenerationTokenCount *int64  `json:"generation_token_count"`

	Outputs []struct {
		Text       string `json:"text"`
		StopReason string `json:"stop_reason"`
	} `json:"outputs"`

	InputTextTokenCount *int64 `json:"inputTextTokenCount"`
	Results             []struct {
		OutputText       string `json:"outputText"`
		TokenCount       int64  `json:"tokenCount"`
		CompletionReason string `json:"completionReason"`
	} `json:"results"`

	Embedding  json.RawMessage `json:"embedding"`
	Embeddings json.RawMessage `json:"embeddings"`
}

// parseFamily fills rec from a non-Claude modelOutput: the text and stop reason
// of text families, the tokens every family reports in its own fields, and for
// embeddings (and shapes it does not know) the response itself, compacted.
func parseFamily(output []byte, rec *job.Record) error {
	var o nativeOutput
	if err := json.Unmarshal(output, &o); err != nil {
		return fmt.Errorf("modelOutput: %w", err)
	}
	switch {
	case o.Output != nil: // Nova, Converse
		var sb strings.Builder
		for _, c := range o.Output.Message.Content {
			if c.Text != nil {
				sb.WriteString(*c.Text)
			}
		}
		rec.Output, rec.StopReason = sb.String(), o.StopReason
		if len(o.Usage) > 0 {
			if _, err := readUsage(o.Usage, 0, &converseUsage, rec); err != nil {
				return fmt.Errorf("modelOutput.%w", err)
			}
		}
		return nil
	case o.Generation != nil: // Llama
		rec.Output, rec.StopReason = *o.Generation, o.LlamaStop
		rec.InputTokens, rec.OutputTokens = deref(o.PromptTokenCount), deref(o.GenerationTokenCount)
		return nil
	case len(o.Outputs) > 0: // Mistral
		var sb strings.Builder
		for _, c := range o.Outputs {
			sb.WriteString(c.Text)
		}
		rec.Output, rec.StopReason = sb.String(), o.Outputs[len(o.Outputs)-1].StopReason
		return nil
	case len(o.Results) > 0: // Titan Text
		var sb strings.Builder
		for _, r := range o.Results {
			sb.WriteString(r.OutputText)
			rec.OutputTokens += r.TokenCount
		}
		rec.Output, rec.StopReason = sb.String(), o.Results[len(o.Results)-1].CompletionReason
		rec.InputTokens = deref(o.InputTextTokenCount)
		return nil
	}
	// Embeddings and unknown shapes keep the native response; Titan's input count is still read.
	if len(o.Embedding) > 0 && !bytes.HasPrefix(bytes.TrimSpace(o.Embedding), []byte("[")) {
		return errors.New("modelOutput.embedding: want an array")
	}
	rec.InputTokens = deref(o.InputTextTokenCount)
	var buf bytes.Buffer
	buf.Grow(len(output))
	if err := json.Compact(&buf, output); err != nil {
		return err
	}
	rec.Output = string(onceTitan(buf.Bytes()))
	return nil
}

// onceTitan drops a Titan V2 response's embeddingsByType when it holds only
// the float vector, a copy of embedding: stored once, the output is half the
// size (a 1,024-number vector is most of it) and reads back the same.
func onceTitan(compact []byte) []byte {
	if !bytes.HasPrefix(compact, []byte(titanPrefix)) || !bytes.Contains(compact, []byte(`"embeddingsByType"`)) {
		return compact
	}
	var o map[string]json.RawMessage
	var by map[string]json.RawMessage
	if json.Unmarshal(compact, &o) != nil || json.Unmarshal(o["embeddingsByType"], &by) != nil {
		return compact
	}
	if len(by) != 1 || !bytes.Equal(by["float"], o["embedding"]) {
		return compact
	}
	delete(o, "embeddingsByType")
	out, err := json.Marshal(o) // keys sorted: "embedding" stays first
	if err != nil || !bytes.HasPrefix(out, []byte(titanPrefix)) {
		return compact
	}
	return out
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
