package anthropicbatch_test

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/remote"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Only a provider whose calls can fetch results is a ResultFetcher: the one
// the mcp function wires over the providers function is not (it once was,
// and its fetch always failed), the SDK's is.
func TestOnlyFetchingCallsFetch(t *testing.T) {
	cases := []struct {
		name    string
		p       service.BatchProvider
		fetches bool
	}{
		{"remote calls (mcp)", &anthropicbatch.Provider{Calls: remote.AnthropicCalls{}}, false},
		{"SDK calls (ingest, reconciler, make dev)", anthropicsdk.NewProvider("sk-ant-test", "http://127.0.0.1:1", nil), true},
	}
	for _, c := range cases {
		if _, ok := c.p.(service.ResultFetcher); ok != c.fetches {
			t.Errorf("%s: ResultFetcher = %v, want %v", c.name, ok, c.fetches)
		}
	}
}
