package service

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// InputsURI is where a job's records are kept as the caller gave them (one
// job.Input per line, caller ids included), for retry_failed. Batch input
// files hold provider-encoded lines with provider ids, so a batch submit
// writes this copy beside ids.jsonl; an on-demand run's input file already is
// such a list.
func InputsURI(j *job.Job) string {
	if j.Mode == job.ModeOnDemand && len(j.Parts) > 0 {
		return j.Parts[0].InputURI
	}
	return blob.Join(j.InputURI, "inputs.jsonl")
}

// WriteInputs stores a batch job's caller records (see InputsURI).
func WriteInputs(ctx context.Context, blobs Blobs, j *job.Job, recs []job.Input) error {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 256<<10)
		enc := json.NewEncoder(w)
		for i := range recs {
			if err := enc.Encode(&recs[i]); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := blobs.Put(ctx, InputsURI(j), pr, "application/jsonl"); err != nil {
		return fmt.Errorf("write caller records of %s: %w", j.ID, err)
	}
	return nil
}
