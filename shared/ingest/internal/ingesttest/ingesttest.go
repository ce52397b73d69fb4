// Package ingesttest has what the ingest tests, benchmarks and the memory probe
// share: a small Bedrock-shaped test parser and a generator of output files
// that yields lines lazily, so 100s of MB never sit in memory or in the repo.
// The real Bedrock parser lives in shared/provider/bedrock.
package ingesttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// bedrockLine is a Bedrock batch output line, as much of it as the test parser reads.
type bedrockLine struct {
	RecordID    *string `json:"recordId"`
	ModelOutput *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"modelOutput"`
	Error *struct {
		ErrorCode    json.RawMessage `json:"errorCode"` // Bedrock may send a number or a string
		ErrorMessage string          `json:"errorMessage"`
	} `json:"error"`
}

// Parse is the test parser: {"recordId":..,"modelOutput":{Claude message}} or
// {"recordId":..,"error":{"errorCode":..,"errorMessage":..}}.
func Parse(line []byte) (job.Record, error) {
	var l bedrockLine
	if err := json.Unmarshal(line, &l); err != nil {
		return job.Record{}, fmt.Errorf("bad json: %w", err)
	}
	if l.RecordID == nil || *l.RecordID == "" {
		return job.Record{}, errors.New("missing recordId")
	}
	rec := job.Record{ID: *l.RecordID}
	switch {
	case l.Error != nil:
		rec.Status = job.RecordFailed
		rec.ErrorCode = strings.Trim(string(l.Error.ErrorCode), `"`)
		rec.ErrorMessage = l.Error.ErrorMessage
	case l.ModelOutput != nil:
		rec.Status = job.RecordSucceeded
		for _, c := range l.ModelOutput.Content {
			if c.Type == "text" {
				rec.Output += c.Text // one block in practice: no copy
			}
		}
		rec.StopReason = l.ModelOutput.StopReason
		rec.InputTokens = l.ModelOutput.Usage.InputTokens
		rec.OutputTokens = l.ModelOutput.Usage.OutputTokens
	default:
		return job.Record{}, fmt.Errorf("record %s: neither modelOutput nor error", rec.ID)
	}
	return rec, nil
}

const modelInput = `{"anthropic_version":"bedrock-2023-05-31","max_tokens":1024,"messages":[{"role":"user","content":"Summarise the item."}]}`

const converseInput = `{"messages":[{"role":"user","content":[{"text":"Summarise the item."}]}],"inferenceConfig":{"maxTokens":1024}}`

// OKLine is a successful output line with text (JSON-escaped here).
func OKLine(id, text string, in, out int64) string {
	t, _ := json.Marshal(text)
	return fmt.Sprintf(`{"recordId":%q,"modelInput":%s,"modelOutput":{"id":"msg_bdrk_01","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d}}}`,
		id, modelInput, t, in, out)
}

// ErrLine is a failed output line.
func ErrLine(id string, code int, msg string) string {
	m, _ := json.Marshal(msg)
	return fmt.Sprintf(`{"recordId":%q,"modelInput":%s,"error":{"errorCode":%d,"errorMessage":%s}}`, id, modelInput, code, m)
}

// Spec describes a generated output file.
type Spec struct {
	Records int
	// LineBytes is the exact length of each line including its '\n' (at least 400).
	LineBytes int
	// ErrorEvery makes every n-th record a failed one (0: none fail).
	ErrorEvery int
	// Converse makes the lines of a Converse-type job (Converse request and
	// response) instead of Claude's native InvokeModel body.
	Converse bool
}

// Size is the total bytes the generator yields.
func (s Spec) Size() int64 { return int64(s.Records) * int64(s.LineBytes) }

// RecordID is the id of record i (0-based) of a generated file.
func RecordID(i int) string { return fmt.Sprintf("r%07d", i) }

// Resolve is the ingest.IDResolver of a generated file: record i is input
// ordinal i under its own id.
func Resolve(id string) (job.RecordKey, bool, error) {
	var i int
	if _, err := fmt.Sscanf(id, "r%07d", &i); err != nil || RecordID(i) != id {
		return job.RecordKey{}, false, nil
	}
	return job.RecordKey{ID: id, Ordinal: i}, true, nil
}

// Generator yields a Spec's lines lazily.
type Generator struct {
	spec Spec
	next int
	line []byte
	pos  int
}

// NewGenerator yields the lines of spec.
func NewGenerator(spec Spec) *Generator {
	spec.LineBytes = max(spec.LineBytes, 400)
	return &Generator{spec: spec, line: make([]byte, 0, spec.LineBytes)}
}

// filler is JSON-escaped text with a newline escape, so parsing unescapes like real output does.
const filler = `The quick brown fox jumps over the lazy dog; \"quoted\" words & <tags>.\n `

func (g *Generator) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if g.pos == len(g.line) {
			if g.next == g.spec.Records {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			g.makeLine(g.next)
			g.next++
		}
		c := copy(p[n:], g.line[g.pos:])
		g.pos += c
		n += c
	}
	return n, nil
}

// makeLine builds line i padded to exactly LineBytes.
func (g *Generator) makeLine(i int) {
	id := RecordID(i)
	var head, tail string
	in := modelInput
	if g.spec.Converse {
		in = converseInput
	}
	switch {
	case g.spec.ErrorEvery > 0 && i%g.spec.ErrorEvery == g.spec.ErrorEvery-1:
		head = `{"recordId":"` + id + `","modelInput":` + in + `,"error":{"errorCode":400,"errorMessage":"`
		tail = `"}}` + "\n"
	case g.spec.Converse:
		head = `{"recordId":"` + id + `","modelInput":` + in + `,"modelOutput":{"output":{"message":{"role":"assistant","content":[{"text":"`
		tail = `"}]}},"stopReason":"end_turn","usage":{"inputTokens":` + strconv.Itoa(10+i%90) + `,"outputTokens":` + strconv.Itoa(100+i%900) + `,"totalTokens":` + strconv.Itoa(110+i%90+i%900) + `},"metrics":{"latencyMs":1200}}}` + "\n"
	default:
		head = `{"recordId":"` + id + `","modelInput":` + modelInput + `,"modelOutput":{"id":"msg_bdrk_01","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"`
		tail = `"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":` + strconv.Itoa(10+i%90) + `,"output_tokens":` + strconv.Itoa(100+i%900) + `}}}` + "\n"
	}
	b := append(g.line[:0], head...)
	for fill := g.spec.LineBytes - len(head) - len(tail); fill > 0; {
		c := min(fill, len(filler))
		b = append(b, filler[:c]...)
		fill -= c
	}
	// Never end the text on half an escape (filler's backslashes all start one).
	if end := len(b) - 1; end >= len(head) && b[end] == '\\' {
		b[end] = ' '
	}
	g.line = append(b, tail...)
	g.pos = 0
}

// Blobs serves the generated file at any offset, lazily (it never sits in
// memory); Put discards what is written.
type Blobs struct{ Spec Spec }

func (b Blobs) Open(_ context.Context, _ string, offset int64) (io.ReadCloser, error) {
	gen := NewGenerator(b.Spec)
	if _, err := io.CopyN(io.Discard, gen, offset); err != nil {
		return nil, err
	}
	return io.NopCloser(gen), nil
}

func (Blobs) Put(_ context.Context, _ string, r io.Reader, _ string) (int64, error) {
	return io.Copy(io.Discard, r)
}
