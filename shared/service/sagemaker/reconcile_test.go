package sagemaker_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/internal/localdeps"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// deniedBlobs answers AccessDenied for one object, as S3 does for a missing
// key when the reader lacks s3:ListBucket.
type deniedBlobs struct {
	service.Blobs
	denied string
}

func (d deniedBlobs) Open(ctx context.Context, uri string, off int64) (io.ReadCloser, error) {
	if uri == d.denied {
		return nil, errors.New("AccessDenied: simulated S3 403")
	}
	return d.Blobs.Open(ctx, uri, off)
}

type nopBus struct{}

func (nopBus) Publish(context.Context, string, any) error { return nil }

// One SageMaker job whose probe is refused does not keep the recovery from
// settling the others; the run reports the one it could not settle.
func TestSageMakerRecoveryContinuesPastAFailingJob(t *testing.T) {
	ctx := context.Background()
	st, blobs := localdeps.New(t)
	start := time.Now().Add(-time.Hour)
	var ids []string
	for i := range 3 {
		now := start.Add(time.Duration(i) * time.Minute)
		id := job.NewID(now)
		out := "s3://test/sagemaker/output/" + id + ".out"
		j := &job.Job{ID: id, Owner: "alice", Provider: job.ProviderSageMaker, Model: "ep", Status: job.StatusInProgress,
			RecordCount: 1, Shards: 1, TTLDays: 7, OutputURI: out, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(72 * time.Hour)}
		if err := st.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		if _, err := blobs.Put(ctx, out, strings.NewReader(`{"answer":1}`), "application/json"); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	first, _ := st.GetJob(ctx, ids[0])
	b := deniedBlobs{blobs, first.OutputURI}
	m := &smsvc.Service{Jobs: st, Blobs: b, Results: store.Writer{Records: st, Objects: b, Prefix: service.ResultsPrefix("")}, Telemetry: service.Telemetry{Bus: nopBus{}}}
	n, err := m.ReconcileSageMaker(ctx, time.Now(), 100)
	if n != 2 {
		t.Fatalf("settled %d jobs, want the 2 whose probe worked (err %v)", n, err)
	}
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") || !strings.Contains(err.Error(), "1 ") {
		t.Fatalf("run error = %v, want one failed job with its cause", err)
	}
	for i, id := range ids {
		j, _ := st.GetJob(ctx, id)
		if want := i > 0; j.Status.Terminal() != want {
			t.Errorf("job %d: %s", i, j.Status)
		}
	}
}
