package sagemaker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	sdk "github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"

	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
	"github.com/mcpbatch/mcpbatch/shared/provider/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/query"
	smsvc "github.com/mcpbatch/mcpbatch/shared/service/sagemaker"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

var moto *motoserver.Server

func TestMain(m *testing.M) { os.Exit(motoserver.Main(m, &moto)) }

type noBus struct{ completed []service.Completed }

func (b *noBus) Publish(_ context.Context, dt string, d any) error {
	if dt == config.DetailJobCompleted {
		b.completed = append(b.completed, d.(service.Completed))
	}
	return nil
}

// motoQueue posts expected results to moto's sagemaker-runtime control API.
func motoQueue(t *testing.T, path string, results any) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"results": results})
	resp, err := http.Post(moto.Endpoint+"/moto-api/static/sagemaker/"+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("moto %s: %s", path, resp.Status)
	}
}

// TestFlowsAgainstMoto: the same async and real-time flows against moto_server's
// sagemaker-runtime (which answers from a queue of configured results and writes
// async outputs to its S3), with DynamoDB and S3 in moto too. moto publishes no
// SNS notification, so the test builds the one SageMaker would send from what
// InvokeEndpointAsync returned.
func TestFlowsAgainstMoto(t *testing.T) {
	ctx := context.Background()
	if err := moto.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := moto.Config()
	cfg.BaseEndpoint = aws.String(moto.Endpoint)
	ddb := dynamodb.NewFromConfig(cfg)
	if err := dynamostore.CreateTable(ctx, ddb, "mcpbatch-sm"); err != nil {
		t.Fatal(err)
	}
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("mcpbatch-sm")}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	bus := &noBus{}
	st := dynamostore.New(ddb, "mcpbatch-sm")
	blobs, bucket := s3blob.New(s3c, s3blob.Options{}), "s3://mcpbatch-sm"
	m := &smsvc.Service{
		Jobs: st, Blobs: blobs, Results: store.Writer{Records: st, Objects: blobs, Prefix: service.ResultsPrefix(bucket)},
		Telemetry: service.Telemetry{Bus: bus, Log: log}, Log: log, Bucket: bucket,
		Runtime:   sagemaker.New(sdk.NewFromConfig(cfg), log),
		Endpoints: []string{"moto-ep"},
	}
	q := &query.Service{Jobs: st, Records: st}

	t.Run("real-time", func(t *testing.T) {
		motoQueue(t, "endpoint-results", []map[string]string{{"Body": `{"answer":42}`, "ContentType": "application/json", "InvokedProductionVariant": "blue"}})
		res, err := m.Invoke(ctx, smsvc.InvokeRequest{Endpoint: "moto-ep", Body: []byte(`{"q":1}`), ContentType: "application/json"})
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Body) != `{"answer":42}` || res.ContentType != "application/json" || res.InvokedVariant != "blue" || res.Attempts != 1 {
			t.Fatalf("got %+v (%s)", res, res.Body)
		}
	})

	tests := []struct {
		name       string
		result     map[string]any
		wantStatus job.Status
		wantOutput string
	}{
		{"async success read from moto's S3", map[string]any{"data": `{"first":"output"}`}, job.StatusCompleted, `{"first":"output"}`},
		{"async failure", map[string]any{"is_failure": true, "data": "second inference failed"}, job.StatusFailed, ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			motoQueue(t, "async-endpoint-results", []map[string]any{tc.result})
			j, err := m.InvokeAsync(ctx, smsvc.AsyncRequest{
				Owner: "alice", Endpoint: "moto-ep", InputURI: fmt.Sprintf("s3://mcpbatch-sm/inputs/%s/%d.json", service.OwnerTag("alice"), i), ContentType: "application/json",
			})
			if err != nil {
				t.Fatal(err)
			}
			if j.Status != job.StatusSubmitted || j.OutputURI == "" || j.FailureURI == "" {
				t.Fatalf("job %+v", j)
			}
			ev := smsvc.SageMakerEvent{InferenceID: j.ID, Status: smsvc.SageMakerCompleted, OutputLocation: j.OutputURI, ContentType: "application/json"}
			if tc.wantStatus == job.StatusFailed {
				ev = smsvc.SageMakerEvent{InferenceID: j.ID, Status: smsvc.SageMakerFailed, FailureReason: "second inference failed"}
			}
			for range 2 { // a duplicate delivery changes nothing
				if err := m.OnSageMakerEvent(ctx, ev); err != nil {
					t.Fatal(err)
				}
			}
			got, err := q.Get(ctx, "alice", j.ID)
			if err != nil || got.Status != tc.wantStatus {
				t.Fatalf("job %v, %v", got, err)
			}
			p, err := q.ResultsPage(ctx, "alice", service.ResultsQuery{JobID: j.ID})
			recs := p.Records
			if err != nil || len(recs) != 1 || recs[0].Output != tc.wantOutput {
				t.Fatalf("records %+v, %v", recs, err)
			}
			if tc.wantStatus == job.StatusFailed && recs[0].ErrorMessage != "second inference failed" {
				t.Fatalf("failure reason lost: %+v", recs[0])
			}
			if _, err := q.Get(ctx, "mallory", j.ID); err != service.ErrJobNotFound {
				t.Fatalf("other owner: %v", err)
			}
		})
	}
	if len(bus.completed) != 2 {
		t.Errorf("Job Completed published %d times, want once per job", len(bus.completed))
	}
}
