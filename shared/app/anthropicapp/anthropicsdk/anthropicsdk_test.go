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
	"github.com/mcpbatch/mcpbatch/shared/sim"
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
	s := &sim.AnthropicSim{APIKey: "k", Log: slog.New(slog.DiscardHandler)}
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
			if err := s.Settle(); err != nil {
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
