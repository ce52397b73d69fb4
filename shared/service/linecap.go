package service

import (
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
)

// Output line cap. A Bedrock output line repeats the record's input
// (modelInput) next to the model's answer, so a line can be longer than any
// fixed cap; ingest reads a job's lines up to:
//
//	2 × the job's longest input line (re-serialised JSON may escape more)
//	+ the model's max output tokens × BytesPerOutputToken
//	+ OutputLineOverhead (ids, usage, stop reason, error text)
//
// never under jsonl.DefaultMaxLineBytes. BytesPerOutputToken is 4 bytes of
// UTF-8 text per token at most, times 4 for JSON escaping (a control or
// non-ASCII character may be written as \uXXXX).
const (
	BytesPerOutputToken = 4 * 4
	OutputLineOverhead  = 64 << 10
	// unknownModelOutputTokens stands in when the catalog does not know the
	// model (an override removed it while its jobs ran).
	unknownModelOutputTokens = 128_000
)

// OutputLineCap is the longest output line ingest reads for j.
func (c Models) OutputLineCap(j *job.Job) int {
	outTokens := unknownModelOutputTokens
	if c.Catalog != nil {
		if m, ok := c.Catalog.Lookup(j.Model); ok && m.MaxOutputTokens > 0 {
			outTokens = m.MaxOutputTokens
		}
	}
	return max(jsonl.DefaultMaxLineBytes, 2*j.MaxInputLineBytes+outTokens*BytesPerOutputToken+OutputLineOverhead)
}
