package anthropicsdk

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
)

// memBlobs is object storage in memory.
type memBlobs map[string][]byte

func (m memBlobs) Put(_ context.Context, uri string, r io.Reader, _ string) (int64, error) {
	b, err := io.ReadAll(r)
	m[uri] = b
	return int64(len(b)), err
}

func (m memBlobs) Open(_ context.Context, uri string, offset int64) (io.ReadCloser, error) {
	b, ok := m[uri]
	if !ok {
		return nil, fmt.Errorf("no object %s", uri)
	}
	return io.NopCloser(bytes.NewReader(b[offset:])), nil
}

// A batch asking for more than the model's normal output limit reaches the
// simulator's batch maximum only when the create carries the beta header the
// service passes in BetaHeaders: the provider sends it as anthropic-beta.
func TestSubmitSendsBetaHeaders(t *testing.T) {
	s := &simanthropic.AnthropicSim{APIKey: "k", Log: slog.New(slog.DiscardHandler)}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	blobs := memBlobs{}
	p := NewProvider("k", url, blobs)
	ctx := context.Background()
	var lines []string
	for i := range 3 {
		line, err := p.EncodeRecord(i, "claude-haiku-5-5", job.Input{ID: job.ProviderRecordID(i), Prompt: "q"}, job.Params{MaxTokens: 200_000})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(line))
	}
	blobs["mem://in.jsonl"] = []byte(strings.Join(lines, "\n") + "\n")
	for _, tc := range []struct {
		name  string
		betas []string
		want  string // error message of every record; "" succeeded
	}{
		{"with the beta", []string{"output-300k-2026-03-24"}, ""},
		{"without it", nil, "max_tokens: 200000 > 128000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := p.Submit(ctx, service.BatchSubmit{Name: "b", Model: "claude-haiku-5-5", InputURI: "mem://in.jsonl", Records: 3, BetaHeaders: tc.betas})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Settle(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := p.FetchResults(ctx, job.Part{Ref: ref}, "mem://out"); err != nil {
				t.Fatal(err)
			}
			n := 0
			for l := range strings.Lines(string(blobs["mem://out"])) {
				r, err := p.ParseOutputLine([]byte(l))
				if err != nil {
					t.Fatal(err)
				}
				n++
				if got := r.ErrorMessage; tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
					t.Errorf("record %s: error %q, want %q", r.ID, got, tc.want)
				}
			}
			if n != 3 {
				t.Errorf("%d results, want 3", n)
			}
		})
	}
}

// FindSubmitted proves a batch ours only by the part's mark on its results:
// while batches run, ours and another system's of the same size are both
// unproven; once they end, ours is proved the part's, another part's batch
// and the other system's are left out.
func TestFindSubmittedProvesBatchesByTheirMark(t *testing.T) {
	s := &simanthropic.AnthropicSim{APIKey: "k", Log: slog.New(slog.DiscardHandler)}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	blobs := memBlobs{}
	p := NewProvider("k", url, blobs)
	calls := p.Calls.(*Calls)
	ctx := context.Background()
	var lines []string
	for i := range 2 {
		line, err := p.EncodeRecord(i, "claude-haiku-4-5", job.Input{ID: job.ProviderRecordID(i), Prompt: "q"}, job.Params{MaxTokens: 64})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(line))
	}
	blobs["mem://in.jsonl"] = []byte(strings.Join(lines, "\n") + "\n")
	since := s.Now()
	in := service.BatchSubmit{Name: "mcpbatch-j-1", Model: "claude-haiku-4-5", InputURI: "mem://in.jsonl", Records: 2}
	ours, err := p.Submit(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	other := in
	other.Name = "mcpbatch-j-2"
	theirsToo, err := p.Submit(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := calls.Client.Create(ctx, strings.NewReader(`{"requests":[`+
		`{"custom_id":"r00000000","params":{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"q"}]}},`+
		`{"custom_id":"r00000001","params":{"model":"claude-haiku-4-5","max_tokens":64,"messages":[{"role":"user","content":"q"}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.FindSubmitted(ctx, in, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Ours) != 0 || len(got.Unproven) != 3 {
		t.Errorf("while running: %+v, want all three unproven and none ours", got)
	}
	if err := s.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err = p.FindSubmitted(ctx, in, since)
	if err != nil {
		t.Fatal(err)
	}
	if want := (service.Found{Ours: []string{ours}}); len(got.Unproven) != 0 || len(got.Ours) != 1 || got.Ours[0] != ours {
		t.Errorf("once ended: %+v, want %+v (not %s of another part, nor the foreign %s)", got, want, theirsToo, foreign.ID)
	}
	// The mark stays out of the records ingest reads.
	if err := p.FetchResults(ctx, job.Part{Ref: ours}, "mem://out"); err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(blobs["mem://out"])) {
		r, err := p.ParseOutputLine([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := job.ProviderRecordIndex(r.ID); !ok {
			t.Errorf("record id %q is not a provider record id", r.ID)
		}
	}
}
