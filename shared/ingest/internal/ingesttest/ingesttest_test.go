package ingesttest_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/ingest/internal/ingesttest"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

func TestGenerator(t *testing.T) {
	spec := ingesttest.Spec{Records: 300, LineBytes: 777, ErrorEvery: 10}
	data, err := io.ReadAll(ingesttest.NewGenerator(spec))
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != spec.Size() {
		t.Fatalf("%d bytes, want %d", len(data), spec.Size())
	}
	i, failed := 0, 0
	for line := range bytes.Lines(data) {
		if len(line) != spec.LineBytes {
			t.Fatalf("line %d is %d bytes", i+1, len(line))
		}
		rec, err := ingesttest.Parse(line)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if rec.ID != ingesttest.RecordID(i) {
			t.Fatalf("line %d has id %s", i+1, rec.ID)
		}
		if rec.Status == job.RecordFailed {
			failed++
		} else if rec.Output == "" || rec.OutputTokens == 0 {
			t.Fatalf("line %d: %+v", i+1, rec)
		}
		i++
	}
	if i != spec.Records || failed != 30 {
		t.Fatalf("%d records, %d failed", i, failed)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		line    string
		want    job.Record
		wantErr bool
	}{
		{line: ingesttest.OKLine("a", "hi\n", 1, 2), want: job.Record{ID: "a", Status: job.RecordSucceeded, Output: "hi\n", StopReason: "end_turn", InputTokens: 1, OutputTokens: 2}},
		{line: ingesttest.ErrLine("b", 400, "bad"), want: job.Record{ID: "b", Status: job.RecordFailed, ErrorCode: "400", ErrorMessage: "bad"}},
		{line: `{"recordId":"c","error":{"errorCode":"X","errorMessage":"m"}}`, want: job.Record{ID: "c", Status: job.RecordFailed, ErrorCode: "X", ErrorMessage: "m"}},
		{line: `{"recordId":"d"}`, wantErr: true},
		{line: `{"modelOutput":{}}`, wantErr: true},
		{line: `{"recordId":1}`, wantErr: true},
		{line: `{"recordId":"e",`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := ingesttest.Parse([]byte(tt.line))
			if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
				t.Fatalf("Parse = %+v, %v; want %+v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
