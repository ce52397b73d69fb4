package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"path"
	"regexp"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// maxLineBytes bounds one input line; Bedrock's own bound is the 1 GB file.
const maxLineBytes = 64 << 20

// shuffleWindow is how many output lines are held to mix their order: jobs up to
// this size come out in a uniformly random order, bigger ones well mixed, with
// memory bounded either way.
const shuffleWindow = 8192

type validation struct {
	files []string
	total int64
}

// inputFiles resolves the input URI: one object, or every .jsonl object under a
// prefix ending in "/".
func (s *BedrockSim) inputFiles(ctx context.Context, uri string) ([]string, error) {
	if !strings.HasSuffix(uri, "/") {
		return []string{uri}, nil
	}
	objs, err := s.Blobs.List(ctx, uri)
	if err != nil {
		return nil, fmt.Errorf("cannot list the input location %s: %v", uri, err)
	}
	var files []string
	for _, o := range objs {
		if strings.HasSuffix(o.URI, ".jsonl") {
			files = append(files, o.URI)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .jsonl input files found under %s", uri)
	}
	return files, nil
}

// eachLine calls fn with every non-blank line of the object at uri.
func (s *BedrockSim) eachLine(ctx context.Context, uri string, fn func(lineNo int, line []byte) error) error {
	r, err := s.Blobs.Open(ctx, uri, 0)
	if errors.Is(err, blob.ErrNotFound) {
		return fmt.Errorf("input file %s does not exist or the service role cannot read it", uri)
	}
	if err != nil {
		return fmt.Errorf("cannot read input file %s: %v", uri, err)
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("cannot read input file %s: %v", uri, err)
	}
	return nil
}

// validate checks the input as Bedrock's Validating phase does; the error text
// becomes the job's failure message.
func (s *BedrockSim) validate(ctx context.Context, j *simJob) (validation, error) {
	if s.Blobs == nil {
		return validation{}, errors.New("the simulator has no object store to read the input from")
	}
	files, err := s.inputFiles(ctx, j.inputURI)
	if err != nil {
		return validation{}, err
	}
	seen := map[string]struct{}{}
	var total int64
	for _, f := range files {
		var inFile int64
		err := s.eachLine(ctx, f, func(n int, line []byte) error {
			var rec struct {
				RecordID   json.RawMessage `json:"recordId"`
				ModelInput json.RawMessage `json:"modelInput"`
			}
			if line[0] != '{' || json.Unmarshal(line, &rec) != nil {
				return fmt.Errorf("invalid record in %s line %d: each line must be a JSON object", f, n)
			}
			var id string
			if len(rec.RecordID) == 0 || json.Unmarshal(rec.RecordID, &id) != nil || id == "" {
				return fmt.Errorf("invalid record in %s line %d: recordId is missing or not a non-empty string", f, n)
			}
			if _, dup := seen[id]; dup {
				return fmt.Errorf("invalid record in %s line %d: recordId %q is not unique", f, n, id)
			}
			seen[id] = struct{}{}
			if len(rec.ModelInput) == 0 || rec.ModelInput[0] != '{' {
				return fmt.Errorf("invalid record in %s line %d: modelInput is missing or not a JSON object", f, n)
			}
			inFile++
			if inFile > job.BedrockMaxRecords {
				return fmt.Errorf("input file %s has more than %d records", f, job.BedrockMaxRecords)
			}
			return nil
		})
		if err != nil {
			return validation{}, err
		}
		total += inFile
	}
	if total < job.BedrockMinRecords || total > job.BedrockMaxRecords {
		return validation{}, fmt.Errorf("the job has %d records; a batch inference job takes %d to %d records",
			total, job.BedrockMinRecords, job.BedrockMaxRecords)
	}
	return validation{files: files, total: total}, nil
}

type runResult struct {
	processed, succeeded, failed int64
	inputTokens, outputTokens    int64
}

// process answers up to limit records (all when limit < 0) in input order and writes
// <output>/<job id>/<file>.out for each input file, shuffled, plus manifest.json.out.
func (s *BedrockSim) process(ctx context.Context, j *simJob, files []string, limit int) (runResult, error) {
	s.mu.Lock()
	total := j.total
	s.mu.Unlock()
	prefix := blob.Join(j.outputURI, j.id)
	rng := rand.New(rand.NewPCG(s.Seed, j.seq+1))
	var res runResult
	remaining := limit
	index := 0
	for _, f := range files {
		if remaining == 0 {
			break
		}
		out := blob.Join(prefix, path.Base(f)+".out")
		err := s.writeShuffled(ctx, out, rng, func(emit func([]byte) error) error {
			return s.eachLine(ctx, f, func(_ int, line []byte) error {
				if remaining == 0 {
					return errStop
				}
				o, r := s.answer(j, rng, index, line)
				index++
				remaining--
				res.processed++
				if r.ok {
					res.succeeded++
					res.inputTokens += r.in
					res.outputTokens += r.out
				} else {
					res.failed++
				}
				return emit(o)
			})
		})
		if err != nil {
			return runResult{}, err
		}
	}
	manifest, _ := json.Marshal(map[string]int64{
		"totalRecordCount":     total,
		"processedRecordCount": res.processed,
		"successRecordCount":   res.succeeded,
		"errorRecordCount":     res.failed,
		"inputTokenCount":      res.inputTokens,
		"outputTokenCount":     res.outputTokens,
	})
	if _, err := s.Blobs.Put(ctx, blob.Join(prefix, "manifest.json.out"), bytes.NewReader(manifest), "application/json"); err != nil {
		return runResult{}, fmt.Errorf("write manifest: %v", err)
	}
	return res, nil
}

var errStop = errors.New("stop")

// writeShuffled streams the lines produce emits to uri in a shuffled order.
func (s *BedrockSim) writeShuffled(ctx context.Context, uri string, rng *rand.Rand, produce func(emit func([]byte) error) error) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := s.Blobs.Put(ctx, uri, pr, "application/jsonl")
		pr.CloseWithError(err) // unblock the writer if Put gave up early
		done <- err
	}()
	bw := bufio.NewWriterSize(pw, 256<<10)
	write := func(line []byte) error {
		if _, err := bw.Write(line); err != nil {
			return err
		}
		return bw.WriteByte('\n')
	}
	var window [][]byte
	err := produce(func(line []byte) error {
		if len(window) < shuffleWindow {
			window = append(window, line)
			return nil
		}
		i := rng.IntN(len(window))
		out := window[i]
		window[i] = line
		return write(out)
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	if err == nil {
		rng.Shuffle(len(window), func(a, b int) { window[a], window[b] = window[b], window[a] })
		for _, line := range window {
			if err = write(line); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	pw.CloseWithError(err)
	if putErr := <-done; err == nil && putErr != nil {
		err = fmt.Errorf("write %s: %v", uri, putErr)
	}
	return err
}

type answerResult struct {
	ok      bool
	in, out int64
}

type outputLine struct {
	RecordID    string          `json:"recordId"`
	ModelInput  json.RawMessage `json:"modelInput"`
	ModelOutput any             `json:"modelOutput,omitempty"`
	Error       *outputError    `json:"error,omitempty"`
}

type outputError struct {
	ErrorCode    any    `json:"errorCode"`
	ErrorMessage string `json:"errorMessage"`
}

type claudeRequest struct {
	AnthropicVersion string          `json:"anthropic_version"`
	MaxTokens        int             `json:"max_tokens"`
	System           json.RawMessage `json:"system"`
	Messages         []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type claudeResponse struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Role         string      `json:"role"`
	Model        string      `json:"model"`
	Content      []textBlock `json:"content"`
	StopReason   string      `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Usage        struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

var versionSuffix = regexp.MustCompile(`-v\d+(:\d+)?$`)

// answer makes the simulated output line of one input line.
func (s *BedrockSim) answer(j *simJob, rng *rand.Rand, index int, line []byte) ([]byte, answerResult) {
	var rec struct {
		RecordID   string          `json:"recordId"`
		ModelInput json.RawMessage `json:"modelInput"`
	}
	_ = json.Unmarshal(line, &rec) // validated in the Validating step
	o := outputLine{RecordID: rec.RecordID, ModelInput: rec.ModelInput}
	var r answerResult
	switch {
	case s.FailRecord != nil && s.FailRecord(rec.RecordID) || s.FailEvery > 0 && index%s.FailEvery == s.FailEvery-1:
		o.Error = injectedError(rec.RecordID)
	case strings.HasPrefix(baseModel(j.model), "anthropic."):
		var req claudeRequest
		err := json.Unmarshal(rec.ModelInput, &req)
		switch {
		case err != nil:
			o.Error = malformed(err.Error())
		case req.AnthropicVersion == "":
			o.Error = malformed("#: required key [anthropic_version] not found")
		case req.MaxTokens <= 0:
			o.Error = malformed("#: required key [max_tokens] not found")
		case len(req.Messages) == 0:
			o.Error = malformed("#: required key [messages] not found")
		default:
			resp := claudeAnswer(j.model, rng, rec.RecordID, req, len(rec.ModelInput))
			o.ModelOutput = resp
			r = answerResult{ok: true, in: resp.Usage.InputTokens, out: resp.Usage.OutputTokens}
		}
	default:
		text := fmt.Sprintf("[simulated] %s reply to record %s", j.model, rec.RecordID)
		o.ModelOutput = map[string]any{"simulated": true, "outputText": text}
		r = answerResult{ok: true}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(o); err != nil {
		o.ModelInput, o.ModelOutput, o.Error = json.RawMessage("null"), nil, malformed(err.Error())
		buf.Reset()
		_ = enc.Encode(o)
		r = answerResult{}
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), r
}

// injectedError alternates, per record id, between the two shapes Bedrock writes:
// a numeric HTTP status and an exception name.
func injectedError(recordID string) *outputError {
	h := fnv.New32a()
	h.Write([]byte(recordID))
	if h.Sum32()%2 == 0 {
		return &outputError{ErrorCode: 400, ErrorMessage: "[simulated] Malformed input request: the simulator rejected this record on purpose."}
	}
	return &outputError{ErrorCode: "ThrottlingException", ErrorMessage: "[simulated] Too many requests, please wait before trying again."}
}

func malformed(detail string) *outputError {
	return &outputError{ErrorCode: 400, ErrorMessage: "[simulated] Malformed input request: " + detail + ", please reformat your input and try again."}
}

func claudeAnswer(model string, rng *rand.Rand, recordID string, req claudeRequest, inputBytes int) claudeResponse {
	prompt := ""
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			prompt = contentText(req.Messages[i].Content)
			break
		}
	}
	fullPrompt := prompt
	if len(prompt) > 60 {
		prompt = strings.ToValidUTF8(prompt[:60], "") + "..."
	}
	name := strings.TrimPrefix(baseModel(model), "anthropic.")
	name = versionSuffix.ReplaceAllString(name, "")
	text := fmt.Sprintf("[simulated] %s reply to record %s: %q", name, recordID, prompt)
	if _, ok := askedCategories(contentText(req.System)); ok {
		// A classification prompt gets the same JSON answer the runtime simulator gives.
		text = SimulatedAnswer(contentText(req.System), fullPrompt, recordID)
	}
	resp := claudeResponse{
		ID:         fmt.Sprintf("msg_bdrk_sim%016x", rng.Uint64()),
		Type:       "message",
		Role:       "assistant",
		Model:      name,
		StopReason: "end_turn",
	}
	resp.Usage.InputTokens = int64(max(1, inputBytes/4))
	out := int64(max(1, len(text)/4))
	if out > int64(req.MaxTokens) {
		// Cut the reply at max_tokens, as the model would.
		out = int64(req.MaxTokens)
		text = strings.ToValidUTF8(text[:min(len(text), max(req.MaxTokens*4, len("[simulated]")))], "")
		resp.StopReason = "max_tokens"
	}
	resp.Usage.OutputTokens = out
	resp.Content = []textBlock{{Type: "text", Text: text}}
	return resp
}

// contentText is the text of a message content: a string, or its first text block.
func contentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var blocks []textBlock
	if json.Unmarshal(c, &blocks) == nil {
		for _, b := range blocks {
			if b.Type == "text" {
				return b.Text
			}
		}
	}
	return ""
}
