package handler

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

type fakeSvc struct {
	bedrock   []batch.ProviderEvent
	ingested  []string
	continued []string
	ingest    func(ctx context.Context) error
}

func (f *fakeSvc) OnProviderEvent(_ context.Context, ev batch.ProviderEvent) error {
	f.bedrock = append(f.bedrock, ev)
	return nil
}

func (f *fakeSvc) Ingest(ctx context.Context, id string) error {
	f.ingested = append(f.ingested, id)
	if f.ingest != nil {
		return f.ingest(ctx)
	}
	return nil
}

func (f *fakeSvc) ContinueIngest(_ context.Context, id string) error {
	f.continued = append(f.continued, id)
	return nil
}

func router(f *fakeSvc) *Router {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	return &Router{Events: map[string]func(context.Context, events.CloudWatchEvent) error{
		config.BedrockEventSource + "|" + config.BedrockDetailType: (&BedrockEvents{Svc: f, Log: log}).Handle,
		config.EventSource + "|" + config.DetailJobOutputReady:     (&Ingest{Svc: f, Log: log}).Handle,
	}}
}

// TestBedrockSamples feeds every sample in events/bedrock to the handler the
// Lambda runs; the file name is the status the event carries.
func TestBedrockSamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "events", "bedrock", "*.json"))
	if err != nil || len(files) != 10 {
		t.Fatalf("want the ten Bedrock status samples, got %d (%v)", len(files), err)
	}
	for _, f := range files {
		status := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(status, func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			svc := &fakeSvc{}
			if err := router(svc).Route(context.Background(), body); err != nil {
				t.Fatal(err)
			}
			if len(svc.bedrock) != 1 {
				t.Fatalf("handler called %d times", len(svc.bedrock))
			}
			ev := svc.bedrock[0]
			if ev.Status != status || ev.JobName != "mcpbatch-01jdz3k6r8x9y2w4v5t7q0m1n3" || !strings.HasPrefix(ev.Ref, "arn:aws:bedrock:") {
				t.Fatalf("parsed %+v", ev)
			}
			if status == "Failed" && ev.Message == "" {
				t.Error("failure message lost")
			}
		})
	}
}

func TestProjectSamples(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "..", "events", "project", "job-output-ready.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc := &fakeSvc{}
	if err := router(svc).Route(context.Background(), body); err != nil {
		t.Fatal(err)
	}
	if len(svc.ingested) != 1 || svc.ingested[0] == "" {
		t.Fatalf("ingest calls %v", svc.ingested)
	}
	// Job Completed is a notification with no consumer in this stack: acknowledged.
	body, err = os.ReadFile(filepath.Join("..", "..", "events", "project", "job-completed.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := router(svc).Route(context.Background(), body); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedEventsAreAcknowledged(t *testing.T) {
	tests := []struct {
		name string
		ev   events.CloudWatchEvent
	}{
		{"bedrock detail not an object", events.CloudWatchEvent{Source: "aws.bedrock", DetailType: "Batch Inference Job State Change", Detail: json.RawMessage(`"x"`)}},
		{"wrong source on the bedrock rule", events.CloudWatchEvent{Source: "aws.s3", DetailType: "Batch Inference Job State Change", Detail: json.RawMessage(`{}`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeSvc{}
			h := &BedrockEvents{Svc: svc, Log: slog.New(slog.DiscardHandler)}
			if err := h.Handle(context.Background(), tc.ev); err != nil {
				t.Fatalf("malformed event must be acknowledged, got %v", err)
			}
			if len(svc.bedrock) != 0 {
				t.Fatal("malformed event reached the service")
			}
		})
	}
	svc := &fakeSvc{}
	if err := (&Ingest{Svc: svc, Log: slog.New(slog.DiscardHandler)}).Handle(context.Background(), events.CloudWatchEvent{Detail: json.RawMessage(`{"jobId":""}`)}); err != nil || len(svc.ingested) != 0 {
		t.Fatalf("empty job id: err %v, calls %v", err, svc.ingested)
	}
}

// TestIngestContinuesBeforeTimeout: an ingest that would outlive the invocation
// stops at its reserve and hands over to a new invocation instead of failing.
func TestIngestContinuesBeforeTimeout(t *testing.T) {
	tests := []struct {
		name          string
		ingest        func(ctx context.Context) error
		wantErr       bool
		wantContinued int
	}{
		{"runs out of time", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, false, 1},
		{"finishes", func(context.Context) error { return nil }, false, 0},
		{"real failure", func(context.Context) error { return errors.New("boom") }, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeSvc{ingest: tc.ingest}
			h := &Ingest{Svc: svc, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Reserve: 50 * time.Millisecond}
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			err := h.Handle(ctx, events.CloudWatchEvent{Detail: json.RawMessage(`{"jobId":"01jdz3k6r8x9y2w4v5t7q0m1n3"}`)})
			if (err != nil) != tc.wantErr || len(svc.continued) != tc.wantContinued {
				t.Fatalf("err %v, continued %v", err, svc.continued)
			}
		})
	}
}
