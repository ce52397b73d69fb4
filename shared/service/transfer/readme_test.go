package transfer_test

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// ttlRecorder is the blob store, noting how long each link it signs lasts.
type ttlRecorder struct {
	*fsblob.Store
	ttls []time.Duration
}

func (r *ttlRecorder) PresignGet(ctx context.Context, uri string, ttl time.Duration) (string, error) {
	r.ttls = append(r.ttls, ttl)
	return r.Store.PresignGet(ctx, uri, ttl)
}

// TestReadmeExportOutputLinkLifetime: an export's output_uri link lasts as
// long as the tool reference says.
func TestReadmeExportOutputLinkLifetime(t *testing.T) {
	b, err := os.ReadFile("../../mcpserver/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`output_uri` link you can GET \\(presigned, ([0-9]+) hours").FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("the tool reference states no output_uri lifetime")
	}
	hours, _ := strconv.Atoi(m[1])
	svc, blobs, j := exportSuite(t, []job.Record{{ID: "a01", Status: job.RecordSucceeded, OutputRef: "s3://test/results/x/a01.json"}})
	rec := &ttlRecorder{Store: blobs}
	svc.Blobs = rec
	if _, err := svc.Export(context.Background(), transfer.ExportRequest{Owner: "alice", JobID: j.ID, Format: transfer.ExportJSONL}); err != nil {
		t.Fatal(err)
	}
	if len(rec.ttls) == 0 || rec.ttls[0] != time.Duration(hours)*time.Hour {
		t.Errorf("output links signed for %v; the README says %d hours", rec.ttls, hours)
	}
}

// TestReadmeFileRecordCap: a file submit takes as many records as the tool
// reference says (TestScanRecordCap checks the cap is enforced).
func TestReadmeFileRecordCap(t *testing.T) {
	b, err := os.ReadFile("../../mcpserver/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`\\{\"recordId\",\"modelInput\"\\}`, up to 1 GiB and ([0-9,]+) records").FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("the tool reference states no record cap for files")
	}
	if strings.ReplaceAll(m[1], ",", "") != strconv.Itoa(transfer.MaxFileRecords) {
		t.Errorf("the README says %s records, MaxFileRecords is %d", m[1], transfer.MaxFileRecords)
	}
}
