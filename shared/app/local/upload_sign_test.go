package local

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob/fsblob"
)

// A download link is no upload link: its signature replayed as a PUT (with
// ct=GET and Content-Type: GET) is refused and the object is left as it was.
func TestDownloadLinkIsNotAnUpload(t *testing.T) {
	ctx := context.Background()
	b, err := fsblob.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	uri := Bucket + "/output/j1/export.jsonl"
	if _, err := b.Put(ctx, uri, strings.NewReader("results\n"), "application/jsonl"); err != nil {
		t.Fatal(err)
	}
	u := newUploads(b)
	u.SetBaseURL("http://dev.local")
	link, err := u.PresignGet(ctx, uri, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	lu, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := lu.Query()
	q.Set("ct", "GET")
	req := httptest.NewRequest(http.MethodPut, "/local/uploads?"+q.Encode(), strings.NewReader("overwritten\n"))
	req.Header.Set("Content-Type", "GET")
	w := httptest.NewRecorder()
	u.ServeHTTP(w, req)
	if w.Code != http.StatusForbidden {
		t.Errorf("PUT with a download link's signature: %d %s, want 403", w.Code, w.Body)
	}
	rc, err := b.Open(ctx, uri, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := new(strings.Builder)
	_, _ = io.Copy(got, rc)
	if got.String() != "results\n" {
		t.Errorf("object now holds %q", got)
	}
}
