package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/notify"
)

// opsEndToEnd drives issue 13's tools through the real MCP client against
// make dev: retry_failed on a finished job (retryable only, idempotent), the
// merged latest view, a completion webhook delivered to a loopback receiver
// and verified with make dev's secret, and the console page.
func opsEndToEnd(t *testing.T, d dev, jobID string) {
	base := strings.TrimSuffix(d.url, "/mcp")
	t.Run("console", func(t *testing.T) {
		resp, err := http.Get(base + "/console")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			resp.Header.Get("Content-Security-Policy") == "" || !strings.Contains(string(body), "<html") {
			t.Fatalf("GET /console: %d %v\n%.300s", resp.StatusCode, resp.Header, body)
		}
	})

	// The failed records that are worth retrying: the simulator throttles half of them.
	throttled := 0
	res := structured(t, callTool(t, d, "get_job_results", map[string]any{"job_id": jobID, "status": "failed", "limit": 500}))
	for _, r := range res["records"].([]any) {
		if r.(map[string]any)["error_code"] == "ThrottlingException" {
			throttled++
		}
	}
	if throttled == 0 {
		t.Fatal("setup: no throttled records to retry")
	}
	child := structured(t, callTool(t, d, "retry_failed", map[string]any{"job_id": jobID, "which": "retryable"}))
	childID, _ := child["job_id"].(string)
	if child["record_count"] != float64(throttled) || child["retry_of"] != jobID || child["mode"] != "on_demand" || child["existing"] != false {
		t.Fatalf("retry_failed = %v, want a new on-demand job of the %d throttled records", child, throttled)
	}
	again := structured(t, callTool(t, d, "retry_failed", map[string]any{"job_id": jobID, "which": "retryable"}))
	if again["job_id"] != childID || again["existing"] != true {
		t.Fatalf("second retry_failed = %v, want the existing %s", again, childID)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		j := structured(t, callTool(t, d, "get_job", map[string]any{"job_id": childID}))
		if j["terminal"] == true {
			if j["status"] != "completed" || j["retry_of"] != jobID {
				t.Fatalf("retry job = %v", j)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retry job never finished: %v", j)
		}
	}
	parent := structured(t, callTool(t, d, "get_job", map[string]any{"job_id": jobID}))
	if rb, _ := parent["retried_by"].([]any); len(rb) != 1 || rb[0] != childID {
		t.Fatalf("parent retried_by = %v, want [%s]", parent["retried_by"], childID)
	}
	merged := structured(t, callTool(t, d, "get_job_results", map[string]any{"job_id": jobID, "latest": true, "status": "failed", "limit": 500}))
	if n := len(merged["records"].([]any)); n != 15-throttled {
		t.Fatalf("latest failed records = %d, want %d (15 failed, %d retried successfully)", n, 15-throttled, throttled)
	}
	fromChild := 0
	all := structured(t, callTool(t, d, "get_job_results", map[string]any{"job_id": jobID, "latest": true, "limit": 500}))
	for _, r := range all["records"].([]any) {
		if r.(map[string]any)["job_id"] == childID {
			fromChild++
		}
	}
	if fromChild != throttled {
		t.Fatalf("%d merged records come from the retry, want %d", fromChild, throttled)
	}
	refused := callTool(t, d, "retry_failed", map[string]any{"job_id": childID})
	if refused["isError"] != true || !strings.Contains(strings.ToLower(fmt.Sprint(refused["content"])), "no failed records") {
		t.Fatalf("retry of a job without failures: %v", refused)
	}

	t.Run("webhook", func(t *testing.T) {
		var mu sync.Mutex
		var got []*http.Request
		var bodies [][]byte
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got, bodies = append(got, r), append(bodies, b)
			mu.Unlock()
			w.WriteHeader(http.StatusOK)
		}))
		defer rcv.Close()
		h := structured(t, callTool(t, d, "submit_batch", map[string]any{"model": "anthropic.claude-haiku-4-5-20251001-v1:0",
			"records": []map[string]any{{"prompt": "a"}, {"prompt": "b"}}, "notify": map[string]any{"webhook": rcv.URL + "/hook"}}))
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no webhook for job %v", h["job_id"])
			}
		}
		master, err := os.ReadFile(filepath.Join(d.stateDir, "webhook-secret"))
		if err != nil {
			t.Fatal(err)
		}
		sec := structured(t, callTool(t, d, "get_webhook_secret", map[string]any{}))
		secret, owner := sec["secret"].(string), sec["owner"].(string)
		mu.Lock()
		defer mu.Unlock()
		r, body := got[0], bodies[0]
		ts, sig := r.Header.Get(notify.HeaderTimestamp), r.Header.Get(notify.HeaderSignature)
		if r.Header.Get(notify.HeaderOwner) != owner {
			t.Fatalf("owner header %q, get_webhook_secret says %q", r.Header.Get(notify.HeaderOwner), owner)
		}
		if err := notify.Verify([]byte(secret), owner, rcv.URL+"/hook", ts, sig, body, time.Now(), 5*time.Minute); err != nil {
			t.Fatalf("delivery does not verify with the owner's secret from get_webhook_secret: %v", err)
		}
		if notify.Verify(master, owner, rcv.URL+"/hook", ts, sig, body, time.Now(), 5*time.Minute) == nil {
			t.Fatal("the master secret verified: owners would share one secret")
		}
		if !strings.Contains(string(body), `"jobId":"`+h["job_id"].(string)+`"`) || !strings.Contains(string(body), `"type":"job.completed"`) {
			t.Fatalf("body %s", body)
		}
		bad := callTool(t, d, "submit_batch", map[string]any{"model": "anthropic.claude-haiku-4-5-20251001-v1:0",
			"records": []map[string]any{{"prompt": "a"}}, "notify": map[string]any{"webhook": "ftp://example.com/x"}})
		if bad["isError"] != true || !strings.Contains(fmt.Sprint(bad["content"]), "notify.webhook") {
			t.Fatalf("a non-http webhook: %v", bad)
		}
	})
}
