//go:build linux

package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// rieToken is the API key the token-mode samples in events/function-url carry;
// only its SHA-256 is stored in the (moto) secret, as in a deployment.
const rieToken = "mcpb_5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"

// sampleJobID is the job the tools-call samples ask for.
const sampleJobID = "01jdz3k6r8x9y2w4v5t7q0m1n3"

// withTokenAuth switches st to token mode with a secret holding the hash of
// rieToken under the key name owner.
func withTokenAuth(t *testing.T, st *stack, owner string) {
	t.Helper()
	sm := secretsmanager.NewFromConfig(aws.Config{
		Region: region, Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", ""), BaseEndpoint: aws.String(st.endpoint),
	})
	doc, _ := json.Marshal(mcpserver.TokenFile{Keys: []mcpserver.TokenKey{{Name: owner, SHA256: mcpserver.HashToken(rieToken)}}})
	name := st.table + "-api-keys"
	if _, err := sm.CreateSecret(context.Background(), &secretsmanager.CreateSecretInput{Name: aws.String(name), SecretString: aws.String(string(doc))}); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	st.extraEnv = append(st.extraEnv, "MCPBATCH_AUTH=token", "MCPBATCH_TOKEN_SECRET="+name)
}

// putJob stores the sample job for owner straight into the table.
func putJob(t *testing.T, st *stack, owner string) {
	t.Helper()
	now := time.Now()
	err := st.store.CreateJob(t.Context(), &job.Job{
		ID: sampleJobID, Owner: owner, Provider: job.ProviderBedrock, Model: "anthropic.claude-haiku-4-5-20251001-v1:0",
		Status: job.StatusInProgress, RecordCount: 150, Shards: 1, TTLDays: 7, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: job.ExpiresAt(now, 7), InputURI: "s3://" + st.bucket + "/input/" + sampleJobID, OutputURI: "s3://" + st.bucket + "/output/" + sampleJobID,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// sample reads events/function-url/<mode>-<name>.json, optionally without its credentials.
func sample(t *testing.T, mode, name string, strip bool) []byte {
	t.Helper()
	raw := readFile(t, fmt.Sprintf("../events/function-url/%s-%s.json", mode, name))
	if !strip {
		return raw
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	delete(ev["requestContext"].(map[string]any), "authorizer")
	delete(ev["headers"].(map[string]any), "authorization")
	out, _ := json.Marshal(ev)
	return out
}

// TestMCPAuthModes drives the built mcp bootstrap with the Function URL samples
// (initialize, tools/list, tools/call) in both auth modes: the caller is named
// by its IAM principal or by its key, and sees only its own job.
func TestMCPAuthModes(t *testing.T) {
	for _, mode := range []string{"iam", "token"} {
		t.Run(mode, func(t *testing.T) {
			st := newStack(t)
			owner := "arn:aws:iam::123456789012:user/alice" // the samples' IAM caller
			if mode == "token" {
				owner = "rie-tester"
				withTokenAuth(t, st, owner)
			}
			putJob(t, st, owner)
			fn := startLambda(t, "mcp", st)

			t.Run("initialize", func(t *testing.T) {
				status, _, body := streamed(t, fn.invoke(t, sample(t, mode, "initialize", false)))
				if status != http.StatusOK {
					t.Fatalf("status %d: %s", status, body)
				}
				var res struct {
					ProtocolVersion string `json:"protocolVersion"`
					ServerInfo      struct{ Name string }
					Capabilities    struct {
						Tools     any `json:"tools"`
						Resources any `json:"resources"`
					}
				}
				if err := json.Unmarshal(jsonRPCResult(t, body), &res); err != nil {
					t.Fatal(err)
				}
				if res.ServerInfo.Name != "mcpbatch" || res.ProtocolVersion == "" || res.Capabilities.Tools == nil || res.Capabilities.Resources == nil {
					t.Errorf("initialize result %+v", res)
				}
			})
			t.Run("tools/list", func(t *testing.T) {
				status, _, body := streamed(t, fn.invoke(t, sample(t, mode, "tools-list", false)))
				if status != http.StatusOK {
					t.Fatalf("status %d: %s", status, body)
				}
				var list struct{ Tools []struct{ Name string } }
				if err := json.Unmarshal(jsonRPCResult(t, body), &list); err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, tool := range list.Tools {
					names = append(names, tool.Name)
				}
				for _, want := range append(wantTools, "export_results", "create_upload") {
					if !slices.Contains(names, want) {
						t.Errorf("tools/list has %v, want %s", names, want)
					}
				}
			})
			t.Run("tools/call get_job of the caller's job", func(t *testing.T) {
				status, _, body := streamed(t, fn.invoke(t, sample(t, mode, "tools-call-get-job", false)))
				if status != http.StatusOK {
					t.Fatalf("status %d: %s", status, body)
				}
				var res struct {
					IsError           bool `json:"isError"`
					StructuredContent struct {
						JobID string `json:"job_id"`
					} `json:"structuredContent"`
				}
				if err := json.Unmarshal(jsonRPCResult(t, body), &res); err != nil {
					t.Fatal(err)
				}
				if res.IsError || res.StructuredContent.JobID != sampleJobID {
					t.Errorf("get_job: %s", body)
				}
			})
			t.Run("no credentials: 401, nothing about keys", func(t *testing.T) {
				status, headers, body := streamed(t, fn.invoke(t, sample(t, mode, "tools-list", true)))
				if status != http.StatusUnauthorized {
					t.Fatalf("status %d, want 401: %s", status, body)
				}
				var auth string
				for k, v := range headers {
					if strings.EqualFold(k, "WWW-Authenticate") {
						auth = v
					}
				}
				if !strings.HasPrefix(auth, "Bearer") {
					t.Errorf("headers %v lack WWW-Authenticate: Bearer", headers)
				}
				if strings.Contains(string(body), owner) {
					t.Errorf("401 body names the owner: %s", body)
				}
			})
		})
	}
	t.Run("another owner's job is not found", func(t *testing.T) {
		st := newStack(t)
		withTokenAuth(t, st, "rie-tester")
		putJob(t, st, "arn:aws:iam::123456789012:user/alice")
		fn := startLambda(t, "mcp", st)
		status, _, body := streamed(t, fn.invoke(t, sample(t, "token", "tools-call-get-job", false)))
		if status != http.StatusOK || !strings.Contains(string(jsonRPCResult(t, body)), "job not found") {
			t.Errorf("status %d body %s, want a job-not-found tool error", status, body)
		}
	})
}
