package bedrock

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
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
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

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

// eachLine calls fn with every non-blank line of the object at uri; when read
// is not nil it counts the bytes of the object read so far.
func (s *BedrockSim) eachLine(ctx context.Context, uri string, read *int64, fn func(lineNo int, line []byte) error) error {
	r, err := s.Blobs.Open(ctx, uri, 0)
	if errors.Is(err, blob.ErrNotFound) {
		return fmt.Errorf("input file %s does not exist or the service role cannot read it", uri)
	}
	if err != nil {
		return fmt.Errorf("cannot read input file %s: %v", uri, err)
	}
	defer r.Close()
	var src io.Reader = r
	if read != nil {
		src = countingReader{r: r, n: read}
	}
	sc := bufio.NewScanner(src)
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
	var total, jobBytes int64
	maxFile, maxJob := s.maxFileBytes(), s.maxJobBytes()
	for _, f := range files {
		var inFile, size int64
		overSize := func() error {
			if size > maxFile {
				return fmt.Errorf("input file %s is larger than the %d-byte quota per batch inference input file", f, maxFile)
			}
			if jobBytes+size > maxJob {
				return fmt.Errorf("the job's input files are larger than the %d-byte quota per batch inference job", maxJob)
			}
			return nil
		}
		err := s.eachLine(ctx, f, &size, func(n int, line []byte) error {
			if err := overSize(); err != nil {
				return err
			}
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
			if inFile > batchMaxRecordsPerFile {
				return fmt.Errorf("input file %s has more than %d records", f, batchMaxRecordsPerFile)
			}
			return nil
		})
		if err == nil {
			err = overSize()
		}
		if err != nil {
			return validation{}, err
		}
		total += inFile
		jobBytes += size
	}
	minN, maxN := int64(batchMinRecords), int64(batchMaxRecordsPerJob)
	if q := s.Models.batchQuotas(j.model); q != nil { // the account's quotas, when it has them for the model
		minN, maxN = int64(q.MinRecords), int64(q.MaxRecords)
	}
	if total < minN || total > maxN {
		return validation{}, fmt.Errorf("the job has %d records; a batch inference job takes %d to %d records",
			total, minN, maxN)
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
			return s.eachLine(ctx, f, nil, func(_ int, line []byte) error {
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

// answer makes the simulated output line of one input line: modelOutput in
// the model family's InvokeModel shape (or the Converse shape for Converse
// jobs), or an error line for a record the model would refuse.
func (s *BedrockSim) answer(j *simJob, rng *rand.Rand, index int, line []byte) ([]byte, answerResult) {
	var rec struct {
		RecordID   string          `json:"recordId"`
		ModelInput json.RawMessage `json:"modelInput"`
	}
	_ = json.Unmarshal(line, &rec) // validated in the Validating step
	o := outputLine{RecordID: rec.RecordID, ModelInput: rec.ModelInput}
	var r answerResult
	if s.FailRecord != nil && s.FailRecord(rec.RecordID) || s.FailEvery > 0 && index%s.FailEvery == s.FailEvery-1 {
		o.Error = injectedError(rec.RecordID)
	} else {
		inv := s.invocation(j)
		inv.recordID = rec.RecordID
		inv.msgID = fmt.Sprintf("msg_bdrk_sim%016x", rng.Uint64())
		var a answer
		var err error
		if j.invocationType == invocationConverse {
			var req batchConverseLine
			if err = json.Unmarshal(rec.ModelInput, &req); err == nil {
				if len(req.ToolConfig) > 0 && string(req.ToolConfig) != "null" {
					err = errBatchToolConfig
				} else {
					a, _, err = converse(inv, req.converseRequest, 0)
				}
			}
		} else {
			a, err = invokeNative(inv, rec.ModelInput)
		}
		if err != nil {
			o.Error = &outputError{ErrorCode: 400, ErrorMessage: "[simulated] " + err.Error()}
		} else {
			o.ModelOutput = a.body
			r = answerResult{ok: true, in: a.in, out: a.out}
		}
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

// invocation ties a job's model id to the simulator's table; an id it has no
// rules for is served permissively and logged once.
func (s *BedrockSim) invocation(j *simJob) invocation {
	base := baseModel(j.model)
	inv := invocation{modelID: j.model, base: base, replyTokens: s.ReplyTokens, violations: s.Violations}
	inv.m, inv.known = bedrockRules(base)
	if inv.known {
		inv.fam = inv.m.fam
	} else {
		inv.fam = familyOf(base)
		s.permissive.Warn(s.Log, "bedrock sim", j.model, "model id not in the simulator's table")
	}
	return inv
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
