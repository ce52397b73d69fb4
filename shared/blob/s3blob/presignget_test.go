package s3blob_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
)

// TestPresignGetDownloads: a presigned GET (export_results, big outputs)
// downloads under the object's own name, as make dev's /local/objects links
// do; without it a browser opens a JSONL or CSV export inline. Found by the
// export flow on the AWS wiring of the end-to-end suite.
func TestPresignGetDownloads(t *testing.T) {
	st := s3blob.New(newClient(t, "mcpbatch-presign-get"), s3blob.Options{})
	uri := "s3://mcpbatch-presign-get/exports/j1/2026-all.jsonl"
	if _, err := st.Put(t.Context(), uri, strings.NewReader("{}\n"), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	link, err := st.PresignGet(t.Context(), uri, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// S3 answers a GET of the link with the signed response-content-disposition
	// as its Content-Disposition (GetObject, "Overriding response header
	// values": https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html,
	// 2026-12). moto 5.2.1 ignores the override, so the link is checked here.
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := u.Query().Get("response-content-disposition"), `attachment; filename=2026-all.jsonl`; got != want {
		t.Errorf("link %s: response-content-disposition %q, want %q", link, got, want)
	}
}
