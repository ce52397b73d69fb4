package anthropicbatch_test

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/anthropicsdk"
	"github.com/mcpbatch/mcpbatch/shared/provider/anthropic/anthropicbatch"
	"github.com/mcpbatch/mcpbatch/shared/remote"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// Only a provider whose calls can fetch results fetches them: the one
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
		ab := service.NewRegistry(c.p).Abilities(c.p.Name())
		if got := ab.FetchResults != nil; got != c.fetches {
			t.Errorf("%s: fetches results = %v, want %v", c.name, got, c.fetches)
		}
	}
}
