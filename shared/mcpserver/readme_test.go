package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// TestReadmeTaskTools: the tools README.md says answer a task-capable client
// with a task are the ones that do.
func TestReadmeTaskTools(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	m := regexp.MustCompile(`get a task backed by the job from the [a-z]+ job-starting tools \(([^)]*)\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("README.md: no list of the task tools")
	}
	var want, got []string
	for _, n := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
		want = append(want, n[1])
	}
	for name := range taskTools {
		got = append(got, name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("task tools %v; README.md says %v", got, want)
	}
}

// TestReadmeToolCallLogLine: every tool call logs one JSON line naming the
// tool, owner, job id, duration and outcome, as README.md says, and nothing
// of the request or the answer.
func TestReadmeToolCallLogLine(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(b)), " "),
		"Every tool call logs one JSON line: tool, owner, job id, duration, outcome (no bodies, no keys); "+
			"an unexpected failure (one no tool error explains to the caller) logs a second line with its error.") {
		t.Fatal("README.md no longer says what a tool call logs: update this test with it")
	}
	for _, tc := range []struct {
		name    string
		fail    error
		outcome string
		lines   int
	}{
		{"ok", nil, "ok", 1},
		{"the caller's error", job.Fieldf("limit", "secret-body sk-key"), "error", 1},
		{"an internal error", errors.New("store down"), "error", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			s := &Server{Log: slog.New(slog.NewJSONHandler(&buf, nil))}
			ctx := WithOwner(context.Background(), "alice")
			_, _, _ = call(s, ctx, nil, "get_job", "", func(owner string) (JobView, string, string, error) {
				return JobView{JobID: "j1", Error: "secret-body"}, "answer secret-body", "j1", tc.fail
			})
			lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
			if len(lines) != tc.lines {
				t.Fatalf("%d log lines, want %d: %q", len(lines), tc.lines, buf.String())
			}
			if tc.lines == 2 && !strings.Contains(lines[1], "store down") {
				t.Errorf("the second line does not carry the error: %s", lines[1])
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
				t.Fatalf("not JSON: %s", lines[0])
			}
			want := map[string]any{"tool": "get_job", "owner": "alice", "job_id": "j1", "outcome": tc.outcome}
			for k, v := range want {
				if line[k] != v {
					t.Errorf("%s = %v, want %v", k, line[k], v)
				}
			}
			if _, ok := line["duration_ms"]; !ok {
				t.Error("no duration_ms")
			}
			if strings.Contains(lines[0], "secret-body") || strings.Contains(lines[0], "sk-key") {
				t.Errorf("the line carries the request or answer: %s", lines[0])
			}
		})
	}
}

// TestReadmeKeyRefresh: in token mode a new key is accepted, and a revoked
// one refused, within the minutes infra/README.md states, with the default
// refresh (MaxAge unset, as the deployed wiring leaves it).
func TestReadmeKeyRefresh(t *testing.T) {
	b, err := os.ReadFile("../../infra/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`new or revoked keys take effect within ([0-9]+) minutes`).FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("infra/README.md states no key refresh time")
	}
	within, _ := time.ParseDuration(m[1] + "m")
	oldKey, newKey := NewToken(), NewToken()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	keys := []TokenKey{{Name: "alice", SHA256: HashToken(oldKey)}}
	auth := &TokenAuth{Now: func() time.Time { return now }, Load: func() ([]TokenKey, error) { return keys, nil }}
	owner := func(key string) (string, error) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		return auth.Owner(r)
	}
	if got, err := owner(oldKey); err != nil || got != "alice" {
		t.Fatalf("first key: %q %v", got, err)
	}
	keys = []TokenKey{{Name: "bob", SHA256: HashToken(newKey)}} // alice revoked, bob added
	now = now.Add(within)
	if got, err := owner(newKey); err != nil || got != "bob" {
		t.Errorf("%v after the change the new key gives %q %v, want bob", within, got, err)
	}
	if _, err := owner(oldKey); !errors.Is(err, ErrBadToken) {
		t.Errorf("%v after the change the revoked key gives %v, want ErrBadToken", within, err)
	}
}

// TestReadmeReportLinks: get_report's links last the minutes README.md says.
func TestReadmeReportLinks(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`get_report \\{pipeline, date\\}` \\(summary \\+ ([0-9]+)-minute links\\)").FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("README.md states no get_report link lifetime")
	}
	if m[1]+"m0s" != reportLinkTTL.String() {
		t.Errorf("README.md says %s-minute links; get_report signs them for %v", m[1], reportLinkTTL)
	}
}
