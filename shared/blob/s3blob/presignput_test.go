package s3blob_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
)

// A presigned PUT works for a plain HTTP client (no AWS credentials), with the
// signed Content-Type; the object is then readable through the store.
func TestPresignPut(t *testing.T) {
	c := newClient(t, "mcpbatch-presign-put")
	s := s3blob.New(c, s3blob.Options{})
	ctx := context.Background()
	uri := "s3://mcpbatch-presign-put/uploads/abc/01.jsonl"
	url, err := s.PresignPut(ctx, uri, "application/jsonl", 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(url, "X-Amz-Signature=") || !strings.Contains(url, "X-Amz-Expires=900") {
		t.Fatalf("url %q is not a 15-minute SigV4 presigned URL", url)
	}
	body := `{"prompt":"hi"}` + "\n"
	req, _ := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/jsonl")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %s %s", resp.Status, msg)
	}
	rc, err := s.Open(ctx, uri, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != body {
		t.Fatalf("object %q, want %q", got, body)
	}
	for _, tc := range []struct {
		name string
		uri  string
		ttl  time.Duration
	}{
		{"no key", "s3://mcpbatch-presign-put/", time.Minute},
		{"ttl over 7 days", uri, 8 * 24 * time.Hour},
		{"zero ttl", uri, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.PresignPut(ctx, tc.uri, "", tc.ttl); err == nil {
				t.Error("want an error")
			}
		})
	}
	t.Run("presigner without PUT", func(t *testing.T) {
		g := s3blob.NewFromClients(c, getOnly{s3.NewPresignClient(c)}, s3blob.Options{})
		if _, err := g.PresignPut(ctx, uri, "", time.Minute); err == nil || !strings.Contains(err.Error(), "cannot sign uploads") {
			t.Errorf("err %v", err)
		}
	})
}

type getOnly struct{ s3blob.Presigner }
