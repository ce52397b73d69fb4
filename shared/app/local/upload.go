package local

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// Uploads stands in for S3 presigned PUTs in make dev: create_upload links point
// at PUT <BaseURL>/local/uploads?uri=..&exp=..&sig=.., an HMAC-signed,
// expiring link, and the body is streamed into the object folder.
type Uploads struct {
	Blobs blob.Store
	key   []byte

	mu   sync.RWMutex
	base string
}

func newUploads(b blob.Store) *Uploads {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &Uploads{Blobs: b, key: key}
}

// SetBaseURL tells the links where the server listens (http://host:port).
func (u *Uploads) SetBaseURL(base string) {
	u.mu.Lock()
	u.base = base
	u.mu.Unlock()
}

// sign signs a link for method (PUT: an upload, GET: a download) under its
// own prefix, so a download link replayed as an upload (PUT ...&ct=GET) does
// not match and cannot overwrite the object.
func (u *Uploads) sign(method, uri, contentType string, exp int64) string {
	m := hmac.New(sha256.New, u.key)
	fmt.Fprintf(m, "%s\n%s\n%s\n%d", method, uri, contentType, exp)
	return hex.EncodeToString(m.Sum(nil))
}

// PresignPut implements mcpserver.UploadSigner.
func (u *Uploads) PresignPut(_ context.Context, uri, contentType string, ttl time.Duration) (string, error) {
	u.mu.RLock()
	base := u.base
	u.mu.RUnlock()
	if base == "" {
		return "", errors.New("local uploads: the server's base URL is not set")
	}
	exp := time.Now().Add(ttl).Unix()
	q := url.Values{"uri": {uri}, "ct": {contentType}, "exp": {strconv.FormatInt(exp, 10)}, "sig": {u.sign(http.MethodPut, uri, contentType, exp)}}
	return base + "/local/uploads?" + q.Encode(), nil
}

// ServeHTTP takes one signed PUT, as S3 would: 403 for a bad or expired
// signature or a Content-Type other than the signed one.
func (u *Uploads) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	uri, ct := q.Get("uri"), q.Get("ct")
	exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
	if err != nil || !hmac.Equal([]byte(q.Get("sig")), []byte(u.sign(http.MethodPut, uri, ct, exp))) {
		http.Error(w, "SignatureDoesNotMatch: not a link from create_upload", http.StatusForbidden)
		return
	}
	if time.Now().Unix() > exp {
		http.Error(w, "AccessDenied: Request has expired; call create_upload again", http.StatusForbidden)
		return
	}
	if ct != "" && r.Header.Get("Content-Type") != ct {
		http.Error(w, fmt.Sprintf("SignatureDoesNotMatch: send Content-Type: %s", ct), http.StatusForbidden)
		return
	}
	body := http.MaxBytesReader(w, r.Body, transfer.MaxUploadBytes)
	if _, err := u.Blobs.Put(r.Context(), uri, body, ct); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "EntityTooLarge: the file is over 1 GiB", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "upload failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = io.WriteString(w, "")
}

// PresignGet stands in for S3 presigned GETs of exports and big outputs: a
// signed, expiring GET <BaseURL>/local/objects?uri=..&exp=..&sig=.. that a
// browser can open (the console's export links), where a file:// link cannot
// be followed from a web page. Before the base URL is set it is the blob
// store's own file:// link.
func (u *Uploads) PresignGet(ctx context.Context, uri string, ttl time.Duration) (string, error) {
	u.mu.RLock()
	base := u.base
	u.mu.RUnlock()
	if base == "" {
		return u.Blobs.PresignGet(ctx, uri, ttl)
	}
	exp := time.Now().Add(ttl).Unix()
	q := url.Values{"uri": {uri}, "exp": {strconv.FormatInt(exp, 10)}, "sig": {u.sign(http.MethodGet, uri, "", exp)}}
	return base + "/local/objects?" + q.Encode(), nil
}

// ServeGet answers one signed GET, as S3 would: 403 for a bad or expired
// signature, 404 for a missing object; the file downloads under its own name.
func (u *Uploads) ServeGet(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	uri := q.Get("uri")
	exp, err := strconv.ParseInt(q.Get("exp"), 10, 64)
	if err != nil || !hmac.Equal([]byte(q.Get("sig")), []byte(u.sign(http.MethodGet, uri, "", exp))) {
		http.Error(w, "SignatureDoesNotMatch: not a link from this server", http.StatusForbidden)
		return
	}
	if time.Now().Unix() > exp {
		http.Error(w, "AccessDenied: Request has expired; ask for a new link", http.StatusForbidden)
		return
	}
	rc, err := u.Blobs.Open(r.Context(), uri, 0)
	if err != nil {
		http.Error(w, "NoSuchKey: "+err.Error(), http.StatusNotFound)
		return
	}
	defer rc.Close()
	name := path.Base(uri)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	_, _ = io.Copy(w, rc)
}
