package anthropic_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/wire"
	simanthropic "github.com/mcpbatch/mcpbatch/shared/sim/anthropic"
)

// The client over the official SDK against the simulator: the wire format, the
// errors and the result stream.
func TestClientAgainstSimulator(t *testing.T) {
	const key = "sk-ant-test"
	s := &simanthropic.AnthropicSim{APIKey: key, Errored: func(id string) bool { return id == "r2" }, Expired: func(id string) bool { return id == "r3" }}
	url, err := s.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := anthropic.New(option.WithAPIKey(key), option.WithBaseURL(url), option.WithMaxRetries(0))
	ctx := context.Background()
	body := func(ids ...string) string {
		var reqs []string
		for _, id := range ids {
			reqs = append(reqs, fmt.Sprintf(`{"custom_id":%q,"params":{"model":"claude-haiku-4-5","max_tokens":5,"messages":[{"role":"user","content":"q"}]}}`, id))
		}
		return `{"requests":[` + strings.Join(reqs, ",") + `]}`
	}

	t.Run("errors name the field", func(t *testing.T) {
		cases := []struct {
			name, body, want string
		}{
			{"duplicate custom_id", body("a", "a"), "requests.1.custom_id: duplicate custom_id"},
			{"custom_id too long", body(strings.Repeat("x", 65)), "requests.0.custom_id"},
			{"no requests", `{"requests":[]}`, "requests: Field required"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				_, err := c.Create(ctx, strings.NewReader(tc.body))
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "HTTP 400") {
					t.Fatalf("err = %v, want HTTP 400 naming %q", err, tc.want)
				}
			})
		}
		bad := anthropic.New(option.WithAPIKey("wrong"), option.WithBaseURL(url), option.WithMaxRetries(0))
		if _, err := bad.Get(ctx, "msgbatch_x"); err == nil || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "wrong") {
			t.Errorf("wrong key: %v, want HTTP 401 without echoing the key", err)
		}
		if _, err := c.Get(ctx, "msgbatch_missing"); !errors.Is(err, anthropic.ErrNotFound) {
			t.Errorf("unknown batch: %v, want ErrNotFound", err)
		}
	})

	b, err := c.Create(ctx, strings.NewReader(body("r1", "r2", "r3", "r4")))
	if err != nil {
		t.Fatal(err)
	}
	if b.ProcessingStatus != "in_progress" || b.Counts != (anthropic.Counts{Processing: 4}) {
		t.Fatalf("new batch = %+v, want in_progress with every request processing", b)
	}
	if _, err := c.Results(ctx, b.ID, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "still in_progress") {
		t.Errorf("results before the end: %v", err)
	}
	second, err := c.Create(ctx, strings.NewReader(body("x")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cancel(ctx, second.ID); err != nil {
		t.Fatal(err)
	}
	s.Step()
	got, err := c.Get(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ProcessingStatus != "ended" || got.Counts != (anthropic.Counts{Succeeded: 2, Errored: 1, Expired: 1}) || got.ResultsURL == "" {
		t.Fatalf("ended batch = %+v", got)
	}
	var out bytes.Buffer
	n, err := c.Results(ctx, b.ID, &out)
	if err != nil || n != 4 {
		t.Fatalf("results: %d lines, %v", n, err)
	}
	outcome := map[string]job.Record{}
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		r, err := wire.ParseResultLine(line)
		if err != nil {
			t.Fatalf("line %s: %v", line, err)
		}
		outcome[r.ID] = r
	}
	if outcome["r1"].Status != job.RecordSucceeded || outcome["r2"].ErrorCode != "api_error" || outcome["r3"].ErrorCode != "expired" {
		t.Errorf("outcomes = %+v", outcome)
	}
	if !strings.Contains(outcome["r1"].Output, "SIMULATED") {
		t.Errorf("simulated answer does not say so: %q", outcome["r1"].Output)
	}
	cancelled, _ := c.Get(ctx, second.ID)
	if !cancelled.CancelInitiated || cancelled.Counts.Canceled != 1 {
		t.Errorf("cancelled batch = %+v", cancelled)
	}

	t.Run("list pages newest first", func(t *testing.T) {
		page1, next, err := c.List(ctx, "", 1)
		if err != nil || len(page1) != 1 || page1[0].ID != second.ID || next == "" {
			t.Fatalf("page 1 = %+v next %q err %v", page1, next, err)
		}
		page2, next, err := c.List(ctx, next, 1)
		if err != nil || len(page2) != 1 || page2[0].ID != b.ID || next != "" {
			t.Fatalf("page 2 = %+v next %q err %v", page2, next, err)
		}
	})
}
