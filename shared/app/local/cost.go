package local

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/app/routes"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/cost"
)

// FunctionMemoryMB are the memory sizes infra/ gives the Lambdas (infra/functions.go,
// reconciler.go, reports.go, validate.go): a metered run bills duration at them.
var FunctionMemoryMB = map[string]int{"mcp": 512, "bedrock-events": 256, "ingest": 1024, "reconciler": 512,
	"ondemand": 512, "nightly-report": 1024, "validate": 2048, "sagemaker-events": 256}

// route runs an event through the router, counting what AWS bills for it: a
// custom event on the project bus (AWS service events are free), and the
// Lambda invocation of the function that takes it, by its wall time here.
func (l *Suite) route(ctx context.Context, ev []byte, m *cost.Meter) error {
	var probe struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
	}
	_ = json.Unmarshal(ev, &probe)
	if probe.Source == config.EventSource {
		m.Event(len(ev))
	}
	t0 := time.Now()
	err := l.Router.Route(ctx, ev)
	if fn := routes.FunctionFor(probe.Source, probe.DetailType); fn != "" {
		m.Invoke(fn, FunctionMemoryMB[fn], time.Since(t0))
	}
	return err
}

// meteredBlobs counts the suite's own S3 requests and bytes (what the
// providers read and write in the bucket is not counted).
type meteredBlobs struct {
	Objects
	m *cost.Meter
}

// putPartSize is s3blob's multipart part size (s3blob.DefaultPartSize): an
// object above it is a create, one PUT per part, and a complete.
const putPartSize = 8 << 20

func (b meteredBlobs) Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error) {
	n, err := b.Objects.Put(ctx, uri, r, contentType)
	if err == nil {
		reqs := int64(1)
		if n > putPartSize {
			reqs = (n+putPartSize-1)/putPartSize + 2
		}
		b.m.Put(reqs, n)
	}
	return n, err
}

func (b meteredBlobs) Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error) {
	rc, err := b.Objects.Open(ctx, uri, offset)
	if err != nil {
		b.m.Get(1, 0)
		return nil, err
	}
	return &countingReader{ReadCloser: rc, done: func(n int64) { b.m.Get(1, n) }}, nil
}

type countingReader struct {
	io.ReadCloser
	n    int64
	done func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error {
	if c.done != nil {
		c.done(c.n)
		c.done = nil
	}
	return c.ReadCloser.Close()
}
