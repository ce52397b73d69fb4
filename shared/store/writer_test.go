package store_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

type putRecords struct{ got []job.Record }

func (p *putRecords) PutRecords(_ context.Context, _ job.RecordSet, recs []job.Record) error {
	p.got = append(p.got, recs...)
	return nil
}

type objects map[string]string

func (o objects) Put(_ context.Context, uri string, r io.Reader, _ string) (int64, error) {
	b, err := io.ReadAll(r)
	o[uri] = string(b)
	return int64(len(b)), err
}

// TestWriterSpillsBigOutputs: an output over the inline limit goes to an
// object first and the record keeps its pointer; one at the limit stays.
func TestWriterSpillsBigOutputs(t *testing.T) {
	big, edge := strings.Repeat("x", job.MaxInlineOutputBytes+1), strings.Repeat("y", job.MaxInlineOutputBytes)
	recs := []job.Record{{ID: "big", Output: big}, {ID: "edge", Output: edge}}
	p, o := &putRecords{}, objects{}
	w := store.Writer{Records: p, Objects: o, Prefix: "s3://b/results/"}
	if err := w.Put(t.Context(), job.RecordSet{JobID: "j1"}, recs); err != nil {
		t.Fatal(err)
	}
	if len(p.got) != 2 || p.got[0].Output != "" || p.got[0].OutputRef != "s3://b/results/j1/big.out" || o[p.got[0].OutputRef] != big {
		t.Fatalf("big record stored as %+v with objects %d", p.got[0].OutputRef, len(o))
	}
	if p.got[1].Output != edge || p.got[1].OutputRef != "" {
		t.Fatalf("a record at the limit was moved: %q", p.got[1].OutputRef)
	}
	if err := (store.Writer{Records: p}).Put(t.Context(), job.RecordSet{JobID: "j1"}, []job.Record{{ID: "big", Output: big}}); !errors.Is(err, store.ErrTooLarge) {
		t.Fatalf("a big output with nowhere to go: %v, want ErrTooLarge", err)
	}
}
