package batch

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// encodeAll renders every record in the provider's format once: the lengths
// split the job, the lines are its input files. A record that cannot be encoded
// is reported here, before anything is stored. A record with images or
// documents is encoded around a placeholder (see media) and its size is a
// bound on its rendered length.
func (s *Service) encodeAll(req SubmitRequest, prov service.BatchProvider, md *media) ([][]byte, []int, string, error) {
	lines := make([][]byte, len(req.Records))
	sizes := make([]int, len(req.Records))
	inv := NewInvocationCheck(s.abilities(prov).InvocationFor)
	for i := range req.Records {
		in := req.Records[i]
		if md != nil && md.bad[i] {
			continue // a dry run: its problems are reported already
		}
		if err := inv.Add(i, in); err != nil {
			return nil, nil, "", err
		}
		in.ID = job.ProviderRecordID(i) // the caller's id stays with us (ids.jsonl)
		enc := func(in job.Input) ([]byte, error) { return prov.EncodeRecord(i, req.Model, in, req.Params) }
		line, size, ok, err := md.encode(i, in, enc)
		if !ok {
			line, err = enc(in)
			size = len(line)
		}
		if err != nil {
			return nil, nil, "", err
		}
		lines[i], sizes[i] = line, size
		if req.Progress != nil && (i+1)%1000 == 0 {
			req.Progress(i+1, len(req.Records))
		}
	}
	return lines, sizes, inv.Type, nil
}

// InvocationCheck settles a job's invocation type from its records, for
// providers that have several (Abilities.InvocationFor); Type stays "" for
// the others.
type InvocationCheck struct {
	typer func(job.Input) string
	Type  string
	first int
}

// NewInvocationCheck is the check for the jobs of a provider whose
// Abilities.InvocationFor is typer (nil: one way only).
func NewInvocationCheck(typer func(job.Input) string) *InvocationCheck {
	return &InvocationCheck{typer: typer}
}

// Add takes record i into account: an error when it needs another
// invocation type than the records before it.
func (c *InvocationCheck) Add(i int, in job.Input) error {
	if c.typer == nil {
		return nil
	}
	t := c.typer(in)
	switch {
	case c.Type == "":
		c.Type, c.first = t, i
	case t != c.Type:
		return job.Fieldf(fmt.Sprintf("records[%d]", i), "needs a %s provider job but records[%d] needs %s: one job runs one way; give prompts/messages (or Converse model_input) and native model_input bodies in separate jobs", t, c.first, c.Type)
	}
	return nil
}

// writeInput streams lines as JSONL to uri; lines[k] is record start+k, whose
// images and documents md renders in place.
func (s *Service) writeInput(ctx context.Context, uri string, lines [][]byte, start int, md *media) error {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 256<<10)
		for k, line := range lines {
			if err := md.writeLine(ctx, w, start+k, line); err != nil {
				pw.CloseWithError(err)
				return
			}
			w.WriteByte('\n')
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := s.Blobs.Put(ctx, uri, pr, "application/jsonl"); err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("write input %s: %w", uri, err)
	}
	return nil
}
