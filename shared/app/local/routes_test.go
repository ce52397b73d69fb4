package local_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/app/routes"
)

// make dev routes exactly the events of the route table, which the stack's
// rules are built from (infra's TestRulesAreTheRouteTable): every detail
// type of every row, and nothing else.
func TestRoutesAreTheTable(t *testing.T) {
	l, err := local.New(context.Background(), local.Options{Dir: t.TempDir(), Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var want []string
	for _, r := range routes.Table {
		for _, dt := range r.DetailTypes {
			want = append(want, routes.Key(r.Source, dt))
		}
	}
	slices.Sort(want)
	if got := slices.Sorted(maps.Keys(l.Router.Events)); !slices.Equal(got, want) {
		t.Fatalf("make dev routes %q\nthe table routes %q", got, want)
	}
}
