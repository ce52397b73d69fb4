package sim

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// HTTPClient is the SDK's default HTTP client with GuardBody, for SDK clients
// aimed at a simulator on loopback (tests and make dev), where an answer easily
// outruns the client's own write loop.
func HTTPClient() aws.HTTPClient { return GuardBody(awshttp.NewBuildableClient()) }

// GuardBody hands the transport a request body that the SDK's early close
// cannot turn into a failed write. smithy-go closes a request's body as soon as
// the response arrives (transport/http/client.go), and the closed body's
// WriteTo answers io.EOF (transport/http/internal/io/safe.go; both as of
// smithy-go v1.28.9, 2026-08). net/http's write loop reads the body once more
// after its last byte (transfer.go writeBody) and, when that read comes after
// the close, takes the EOF for a failed write and closes the connection under
// the response being read: "use of closed network connection", or a connection
// that is not reused. Without WriteTo, that read is a plain Read whose io.EOF
// just ends the copy.
func GuardBody(c aws.HTTPClient) aws.HTTPClient { return guarded{c} }

type guarded struct{ aws.HTTPClient }

func (g guarded) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return g.HTTPClient.Do(r)
	}
	// A shallow copy: the SDK closes its own r.Body, not the one the transport holds.
	r2 := r.WithContext(r.Context())
	r2.Body = readCloser{r.Body}
	return g.HTTPClient.Do(r2)
}

// readCloser shows only Read and Close of the body it holds.
type readCloser struct{ io.ReadCloser }
