package transfer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

// takenIDs are the explicit ids of a job's input, which generated ids avoid
// (has may say yes for an id that is not there: that id is only skipped).
type takenIDs interface{ has(id string) bool }

// inputSource opens a job's input from its start: the file of a single-file
// submit, or every file of one over many in order (see fanout.go).
type inputSource struct {
	uri  string // how errors name it
	open func(ctx context.Context) (io.ReadCloser, error)
}

// fileSource is the one file of a single-file submit, at its pinned version.
func (s *Service) fileSource(field, uri string, pin *blob.Version) inputSource {
	return inputSource{uri: uri, open: func(ctx context.Context) (io.ReadCloser, error) { return s.openInput(ctx, field, uri, pin) }}
}

// writeFileParts is the second pass: the input streamed into one provider input
// per part and the record-id list, generating ids for records without one;
// the records skip marks (by input ordinal: answered from the cache) are
// left out.
func (s *Service) writeFileParts(ctx context.Context, src inputSource, j *job.Job, req batch.SubmitRequest, prov service.BatchProvider, taken takenIDs, skip []bool, md *batch.Media) error {
	uri := src.uri
	rc, err := src.open(ctx)
	if err != nil {
		return fmt.Errorf("reopen input %s: %w", uri, err)
	}
	defer rc.Close()
	r := jsonl.NewReader(rc, jsonl.Options{MaxLineBytes: maxFileLineBytes})
	return s.writeParts(ctx, r, uri, partsOut{parts: j.Parts, total: j.RecordCount, idsURI: service.IDsURI(j), insURI: service.InputsURI(j), newID: newIDs(taken), skip: skip}, j.ID, req, prov, md)
}

// newIDs generates the ids of a file's records without one, in file order,
// avoiding taken: every pass that settles ids uses it, so they agree.
func newIDs(taken takenIDs) func() string {
	next := 1
	return func() string {
		for {
			id := fmt.Sprintf("r%05d", next)
			next++
			if !taken.has(id) {
				return id
			}
		}
	}
}

// lineReader is the input as writeParts reads it (jsonl.Reader).
type lineReader interface {
	Next() bool
	Bytes() []byte
	Line() int
	Err() error
}

// partsOut is what writeParts writes: parts (in order, starting at record
// first of the job, of total), the id list and the caller records, with
// newID for records that have none.
type partsOut struct {
	parts          []job.Part
	first, total   int
	idsURI, insURI string
	newID          func() string
	// skip marks the input ordinals not to send (reused; nil: none).
	skip []bool
}

// writeParts streams r's records into out.
func (s *Service) writeParts(ctx context.Context, r lineReader, uri string, out partsOut, jobID string, req batch.SubmitRequest, prov service.BatchProvider, md *batch.Media) error {
	idsR, idsW := io.Pipe()
	idsDone := make(chan error, 1)
	go func() {
		_, err := s.Blobs.Put(ctx, out.idsURI, idsR, "application/jsonl")
		idsR.CloseWithError(err)
		idsDone <- err
	}()
	ids := bufio.NewWriter(idsW)
	// The caller's records as given (ids filled in), for retry_failed (service.InputsURI).
	insR, insW := io.Pipe()
	insDone := make(chan error, 1)
	go func() {
		_, err := s.Blobs.Put(ctx, out.insURI, insR, "application/jsonl")
		insR.CloseWithError(err)
		insDone <- err
	}()
	ins := bufio.NewWriterSize(insW, 256<<10)
	insEnc := json.NewEncoder(ins)
	i := out.first
	ordinal := 0 // of the line read, counting the skipped
	var werr error
	for _, p := range out.parts {
		pr, pw := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			w := bufio.NewWriterSize(pw, 256<<10)
			for k := 0; k < p.RecordCount; k++ {
				if !r.Next() {
					if err := r.Err(); err != nil {
						// A read error keeps its kind: the file replaced (a field
						// error that fails the job) or a transient fault (retried).
						pw.CloseWithError(fmt.Errorf("read input %s after line %d: %w", uri, r.Line(), err))
						return
					}
					pw.CloseWithError(fmt.Errorf("input %s changed between validation and submit (ended at line %d)", uri, r.Line()))
					return
				}
				in, err := decodeLine(r.Bytes())
				if err != nil {
					pw.CloseWithError(fmt.Errorf("input %s changed between validation and submit (line %d): %w", uri, r.Line(), err))
					return
				}
				if in.ID == "" {
					in.ID = out.newID()
				}
				ordinal++
				if ordinal <= len(out.skip) && out.skip[ordinal-1] {
					k-- // answered from the cache: its id settled, nothing sent
					continue
				}
				callerID := in.ID
				if err := insEnc.Encode(&in); err != nil {
					pw.CloseWithError(err)
					return
				}
				// Measured again (the renderer needs each part's format and
				// size, and refuses a part that changed since the scan).
				rec, ps := md.Check(ctx, i, in)
				if len(ps) > 0 {
					pw.CloseWithError(fmt.Errorf("input %s changed between validation and submit (line %d): %w", uri, r.Line(), ps[0]))
					return
				}
				in.ID = job.ProviderRecordID(i)
				enc := func(in job.Input) ([]byte, error) { return prov.EncodeRecord(i, req.Model, in, req.Params) }
				if rec != nil {
					line, off, _, err := md.Encode(i, in, rec, enc)
					if err == nil {
						err = md.Write(ctx, w, i, rec, line, off)
					}
					if err != nil {
						pw.CloseWithError(err)
						return
					}
				} else {
					line, err := enc(in)
					if err != nil {
						pw.CloseWithError(err)
						return
					}
					w.Write(line)
				}
				i++
				if err := w.WriteByte('\n'); err != nil {
					return // the reader gave up (Put failed): stop reading
				}
				service.WriteID(ids, callerID)
				if req.Progress != nil && i%progressEvery == 0 {
					req.Progress(i, out.total)
				}
			}
			pw.CloseWithError(w.Flush())
		}()
		_, err := s.Blobs.Put(ctx, p.InputURI, pr, "application/jsonl")
		pr.CloseWithError(err)
		<-done // the writer touches r and ids: wait before the next part
		if err != nil {
			werr = fmt.Errorf("write input %s: %w", p.InputURI, err)
			break
		}
	}
	if werr == nil {
		werr = ids.Flush()
	}
	idsW.CloseWithError(werr)
	if err := <-idsDone; err != nil && werr == nil {
		werr = fmt.Errorf("write record ids of %s: %w", jobID, err)
	}
	ferr := werr
	if ferr == nil {
		ferr = ins.Flush()
	}
	insW.CloseWithError(ferr)
	if err := <-insDone; err != nil && werr == nil {
		werr = fmt.Errorf("write caller records of %s: %w", jobID, err)
	}
	if werr == nil && ferr != nil {
		werr = fmt.Errorf("write caller records of %s: %w", jobID, ferr)
	}
	return werr
}
