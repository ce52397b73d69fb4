// Package simtest has helpers for tests that drive the simulators: an in-memory
// blob.Store and SDK clients pointed at a simulator with static credentials.
package simtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/sim"
)

// MemBlobs is a blob.Store in memory, for tests only (it holds whole objects).
type MemBlobs struct {
	mu   sync.Mutex
	objs map[string][]byte
}

var _ blob.Store = (*MemBlobs)(nil)

// NewMemBlobs returns an empty store.
func NewMemBlobs() *MemBlobs { return &MemBlobs{objs: map[string][]byte{}} }

// Put stores r at uri.
func (m *MemBlobs) Put(ctx context.Context, uri string, r io.Reader, contentType string) (int64, error) {
	if _, _, err := blob.ParseURI(uri); err != nil {
		return 0, err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, fmt.Errorf("memblobs: put %s: %w", uri, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objs[uri] = b
	return int64(len(b)), nil
}

// Open reads the object from offset on.
func (m *MemBlobs) Open(ctx context.Context, uri string, offset int64) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objs[uri]
	if !ok {
		return nil, fmt.Errorf("memblobs: %s: %w", uri, blob.ErrNotFound)
	}
	offset = min(max(offset, 0), int64(len(b)))
	return io.NopCloser(bytes.NewReader(b[offset:])), nil
}

// List lists objects under prefix in key order.
func (m *MemBlobs) List(ctx context.Context, prefix string) ([]blob.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []blob.Object
	for k, v := range m.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, blob.Object{URI: k, Size: int64(len(v))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out, nil
}

// Delete removes an object.
func (m *MemBlobs) Delete(ctx context.Context, uri string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, uri)
	return nil
}

// PresignGet returns a mem:// pseudo URL.
func (m *MemBlobs) PresignGet(ctx context.Context, uri string, ttl time.Duration) (string, error) {
	return "mem://" + strings.TrimPrefix(uri, "s3://"), nil
}

// Bytes returns a copy of the object at uri.
func (m *MemBlobs) Bytes(uri string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objs[uri]
	return bytes.Clone(b), ok
}

// NewBedrockClient returns the real Bedrock SDK client aimed at a simulator at
// endpoint, with static credentials and near-zero retry backoff so tests stay fast.
func NewBedrockClient(endpoint string, optFns ...func(*bedrock.Options)) *bedrock.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDSIMULATOR", "simulator-secret", ""),
		Retryer: func() aws.Retryer {
			return retry.AddWithMaxBackoffDelay(retry.NewStandard(), 5*time.Millisecond)
		},
		HTTPClient: sim.HTTPClient(),
	}
	return bedrock.NewFromConfig(cfg, append([]func(*bedrock.Options){func(o *bedrock.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	}}, optFns...)...)
}
