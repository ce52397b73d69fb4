package bedrock

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/claude"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// ManifestName is the summary file Bedrock writes beside the output files.
const ManifestName = "manifest.json.out"

// OutputSuffix ends every output file: <input file name>.out.
const OutputSuffix = ".out"

// JobID is the 12-character job id: the last path segment of the job ARN.
func JobID(jobARN string) string {
	return jobARN[strings.LastIndexByte(jobARN, '/')+1:]
}

// OutputPrefix is where Bedrock writes a job's output: <outputURI>/<job id>/.
func OutputPrefix(outputURI, jobARN string) string {
	return blob.Join(outputURI, JobID(jobARN)) + "/"
}

// ErrBadLine marks an output line that is not a Bedrock result; the caller counts it and moves on.
var ErrBadLine = errors.New("bad bedrock output line")

func badLine(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadLine, fmt.Sprintf(format, args...))
}

// OutputParser is the parser of a part's output lines by the invocation type
// the part was submitted with ("" for parts stored before Converse jobs:
// InvokeModel).
func OutputParser(invocationType string) func(line []byte) (job.Record, error) {
	if invocationType == InvocationConverse {
		return ParseConverseLine
	}
	return ParseOutputLine
}

// ParseConverseLine parses one output line of a Converse job: modelOutput is
// a Converse response, {output: {message: {content: [{text}...]}},
// stopReason, usage: {inputTokens, outputTokens, cacheReadInputTokens,
// cacheWriteInputTokens}} (https://docs.aws.amazon.com/bedrock/latest/userguide/batch-inference-results.html,
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
// checked 2026-12-01). Bad lines are as for ParseOutputLine.
func ParseConverseLine(line []byte) (job.Record, error) { return parseLine(line, true) }

// ParseOutputLine parses one line of an InvokeModel job's output into a
// record result (JobID and ExpiresAt are the caller's): modelOutput is the
// model's native response (Claude Messages, and the shapes family.go reads).
// A line that is not a result (truncated JSON, wrong types, no recordId,
// neither modelOutput nor error) is an error wrapping ErrBadLine. Lines are
// {recordId, modelInput, modelOutput} or {recordId, modelInput, error:
// {errorCode (string or number), errorMessage}}; modelInput is checked for
// syntax and skipped.
func ParseOutputLine(line []byte) (job.Record, error) { return parseLine(line, false) }

// parseLine reads a line of either job type (the output parsers are called
// directly, not through a func value, so the record stays on the stack).
func parseLine(line []byte, converse bool) (job.Record, error) {
	var (
		rec        job.Record
		output     []byte // the modelOutput value, nil when absent or null
		failed     bool
		errCode    string
		errMessage string
	)
	end, err := eachMember(line, 0, func(key []byte, i int) (next int, err error) {
		switch string(key) {
		case "recordId":
			rec.ID, next, err = readString(line, i, "recordId")
			return next, err
		case "modelOutput":
			next, err := skipValue(line, i)
			if err != nil {
				return next, err
			}
			switch line[i] {
			case '{':
				output = line[i:next]
			case 'n':
				output = nil
			default:
				return next, fmt.Errorf("modelOutput: want an object, got %s", line[i:min(next, i+20)])
			}
			return next, nil
		case "error":
			switch byteAt(line, i) {
			case 'n':
				failed = false
				return literal(line, i, "null")
			case '{':
			default:
				return i, syntaxErr(line, i, "an object for error")
			}
			failed = true
			return eachMember(line, i, func(key []byte, j int) (next int, err error) {
				switch string(key) {
				case "errorCode":
					switch c := byteAt(line, j); {
					case c == '"':
						errCode, next, err = readString(line, j, "errorCode")
						return next, err
					case c == '-' || '0' <= c && c <= '9':
						next, err = scanNumber(line, j)
						errCode = string(line[j:next]) // the literal as written: 400
						return next, err
					}
					return j, syntaxErr(line, j, "a string or a number for errorCode")
				case "errorMessage":
					errMessage, next, err = readStringOrNull(line, j, "errorMessage")
					return next, err
				}
				return skipValue(line, j)
			})
		}
		return skipValue(line, i) // modelInput and anything new
	})
	if err != nil {
		return job.Record{}, fmt.Errorf("%w: %v", ErrBadLine, err)
	}
	if end = skipWS(line, end); end != len(line) {
		return job.Record{}, badLine("data after the object at offset %d", end)
	}
	if rec.ID == "" {
		return job.Record{}, badLine("no recordId")
	}
	if failed {
		rec.Status = job.RecordFailed
		rec.ErrorCode, rec.ErrorMessage = errCode, errMessage
		return rec, nil
	}
	if output == nil {
		return job.Record{}, badLine("record %s has neither modelOutput nor error", rec.ID)
	}
	rec.Status = job.RecordSucceeded
	if converse {
		if err := parseConverse(output, &rec); err != nil {
			return job.Record{}, badLine("record %s: converse modelOutput: %v", rec.ID, err)
		}
		return rec, nil
	}
	if err := parseNative(output, &rec); err != nil {
		return job.Record{}, err
	}
	return rec, nil
}

// parseNative reads a native modelOutput: Claude's Messages response, else
// the other families' shapes (family.go).
func parseNative(output []byte, rec *job.Record) error {
	isClaude, typ, err := parseClaude(output, rec)
	switch {
	case err == nil && isClaude:
		return nil
	case err != nil && typ == "message":
		// It says it is a Claude message but its fields have the wrong types.
		return badLine("record %s: claude modelOutput: %v", rec.ID, err)
	}
	rec.Output, rec.StopReason, rec.InputTokens, rec.OutputTokens = "", "", 0, 0
	rec.CacheReadTokens, rec.CacheWriteTokens = 0, 0
	if err := parseFamily(output, rec); err != nil {
		return badLine("record %s: %v", rec.ID, err)
	}
	return nil
}

// parseConverse reads a Converse response with the scanner: the text of
// output.message.content, in order — text blocks and the text inside
// citationsContent blocks (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CitationsContentBlock.html;
// reasoning and other blocks are skipped) — stopReason and usage.
func parseConverse(b []byte, rec *job.Record) error {
	ct := converseText{b: b}
	sawOutput := false
	_, err := eachMember(b, 0, func(key []byte, i int) (next int, err error) {
		switch string(key) {
		case "output":
			sawOutput = true
			return eachMember(b, i, func(key []byte, j int) (int, error) {
				if string(key) != "message" {
					return skipValue(b, j)
				}
				return eachMember(b, j, func(key []byte, k int) (int, error) {
					if string(key) != "content" {
						return skipValue(b, k)
					}
					if byteAt(b, k) != '[' {
						return k, syntaxErr(b, k, "an array for output.message.content")
					}
					return eachElement(b, k, func(e int) (int, error) { return ct.block(e) })
				})
			})
		case "stopReason":
			rec.StopReason, next, err = readStringOrNull(b, i, "stopReason")
			return next, err
		case "usage":
			return readUsage(b, i, &converseUsage, rec)
		}
		return skipValue(b, i)
	})
	if err != nil {
		return err
	}
	if !sawOutput {
		return fmt.Errorf("no output member: not a Converse response")
	}
	rec.Output = string(ct.text)
	return nil
}

// converseText gathers the text of a Converse answer's content blocks: text
// blocks, and the text blocks inside a citationsContent block (Claude reading
// a document with citations on).
type converseText struct {
	b      []byte
	text   []byte
	blocks int
}

// block reads the content block at b[e].
func (c *converseText) block(e int) (int, error) {
	b := c.b
	return eachMember(b, e, func(key []byte, t int) (next int, err error) {
		switch string(key) {
		case "text":
			var s string
			s, next, err = readString(b, t, "content.text")
			if c.blocks == 0 {
				c.text = append(c.text[:0], s...)
			} else {
				c.text = append(c.text, s...)
			}
			c.blocks++
			return next, err
		case "citationsContent":
			return eachMember(b, t, func(key []byte, k int) (int, error) {
				if string(key) != "content" || byteAt(b, k) != '[' {
					return skipValue(b, k)
				}
				return eachElement(b, k, func(e int) (int, error) { return c.block(e) })
			})
		}
		return skipValue(b, t)
	})
}

// parseClaude reads a Claude Messages response: the text blocks, stop_reason and
// usage. isClaude says a content array was there; typ is the "type" member, read
// even when another member has the wrong type.
func parseClaude(b []byte, rec *job.Record) (isClaude bool, typ string, err error) {
	var text []byte
	blocks := 0
	_, err = eachMember(b, 0, func(key []byte, i int) (next int, err error) {
		switch string(key) {
		case "type":
			typ, next, err = readString(b, i, "type")
			return next, err
		case "content":
			if byteAt(b, i) != '[' {
				return i, syntaxErr(b, i, "an array for content")
			}
			isClaude = true
			return eachElement(b, i, func(j int) (int, error) {
				var btype, btext string
				next, err := eachMember(b, j, func(key []byte, k int) (next int, err error) {
					switch string(key) {
					case "type":
						btype, next, err = readString(b, k, "content.type")
					case "text":
						btext, next, err = readString(b, k, "content.text")
					default:
						next, err = skipValue(b, k)
					}
					return next, err
				})
				if btype == "text" {
					if blocks == 0 {
						text = append(text[:0], btext...)
					} else {
						text = append(text, btext...)
					}
					blocks++
				}
				return next, err
			})
		case "stop_reason":
			rec.StopReason, next, err = readStringOrNull(b, i, "stop_reason")
			return next, err
		case "usage":
			return readUsage(b, i, &claudeUsage, rec)
		}
		return skipValue(b, i)
	})
	if err != nil && typ == "" {
		typ = memberString(b, "type")
	}
	rec.Output = string(text)
	return isClaude, typ, err
}

// byteAt is b[i], or 0 past the end (a truncated line).
func byteAt(b []byte, i int) byte {
	if i < len(b) {
		return b[i]
	}
	return 0
}

// memberString returns the top-level string member key of object b, or "".
func memberString(b []byte, want string) string {
	var out string
	_, _ = eachMember(b, 0, func(key []byte, i int) (int, error) {
		if string(key) == want && byteAt(b, i) == '"' {
			s, next, err := readString(b, i, want)
			if err == nil {
				out = s
			}
			return next, err
		}
		return skipValue(b, i)
	})
	return out
}

// eachElement calls fn for every element of the array at b[i]; fn consumes it.
func eachElement(b []byte, i int, fn func(at int) (int, error)) (int, error) {
	i = skipWS(b, i+1) // b[i] == '['
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = fn(skipWS(b, i)); err != nil {
			return i, err
		}
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		return i, syntaxErr(b, i, "',' or ']'")
	}
}

// Manifest is manifest.json.out: Bedrock's own counts for a job's output.
type Manifest struct {
	TotalRecordCount     int64 `json:"totalRecordCount"`
	ProcessedRecordCount int64 `json:"processedRecordCount"`
	SuccessRecordCount   int64 `json:"successRecordCount"`
	ErrorRecordCount     int64 `json:"errorRecordCount"`
	InputTokenCount      int64 `json:"inputTokenCount"`
	OutputTokenCount     int64 `json:"outputTokenCount"`
}

// ParseManifest reads manifest.json.out.
func ParseManifest(r io.Reader) (Manifest, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20)) // a manifest is a few hundred bytes
	if err != nil {
		return Manifest{}, fmt.Errorf("bedrock: read %s: %w", ManifestName, err)
	}
	if claude.FirstByte(b) != '{' {
		return Manifest{}, fmt.Errorf("bedrock: parse %s: not a JSON object", ManifestName)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("bedrock: parse %s: %w", ManifestName, err)
	}
	if m.ProcessedRecordCount > m.TotalRecordCount && m.TotalRecordCount > 0 ||
		m.SuccessRecordCount+m.ErrorRecordCount > m.ProcessedRecordCount && m.ProcessedRecordCount > 0 {
		return Manifest{}, fmt.Errorf("bedrock: parse %s: inconsistent counts %+v", ManifestName, m)
	}
	return m, nil
}
