package refresh

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// counting counts the snapshot reads.
type counting struct {
	store.Snapshots
	gets int
}

func (c *counting) GetSnapshot(ctx context.Context, key string) (store.Snapshot, error) {
	c.gets++
	return c.Snapshots.GetSnapshot(ctx, key)
}

// TestReloader: a warm function reads the stored facts again once its copy
// is older than the period, one read per period, and lays a newer version
// over the catalog; nothing stored yet leaves the embedded catalog.
func TestReloader(t *testing.T) {
	st, err := localstore.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	now := t0
	snaps := &counting{Snapshots: st}
	r := &Reloader{Service: newService(t, snaps, nil, &now), Every: 15 * time.Minute}
	access := func() string {
		m, _ := r.Service.Catalog.Lookup("amazon.nova-lite-v1:0")
		if m.Account == nil {
			return "none"
		}
		return m.Account.Access
	}
	refreshElsewhere := func(acc string) {
		at := now
		if _, err := newService(t, st, &reader{access: acc}, &at).Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Load(t.Context()); err == nil || access() != "none" {
		t.Fatalf("cold start with nothing stored: %v, facts %s", err, access())
	}
	refreshElsewhere(model.AccessGranted)
	steps := []struct {
		name  string
		after time.Duration // since t0
		store string        // a refresh elsewhere stores this access first ("": none)
		gets  int           // snapshot reads so far
		want  string
	}{
		{"within the period: no read", 5 * time.Minute, "", 1, "none"},
		{"period over: the stored facts read", 16 * time.Minute, "", 2, model.AccessGranted},
		{"a refresh elsewhere, within the period: not seen yet", 20 * time.Minute, model.AccessDenied, 2, model.AccessGranted},
		{"next period: the new version laid over", 32 * time.Minute, "", 3, model.AccessDenied},
		{"same version next period: read, nothing to lay", 48 * time.Minute, "", 4, model.AccessDenied},
	}
	for _, s := range steps {
		now = t0.Add(s.after)
		if s.store != "" {
			refreshElsewhere(s.store)
		}
		r.Maybe(t.Context())
		if snaps.gets != s.gets || access() != s.want {
			t.Fatalf("%s: %d reads, access %s; want %d reads, %s", s.name, snaps.gets, access(), s.gets, s.want)
		}
	}
}

// TestReadmeReloadPeriod: the period shared/model/README.md states is the one
// mcp uses.
func TestReadmeReloadPeriod(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "model", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("again every %d minutes while warm (`refresh.DefaultReloadEvery`)", int(DefaultReloadEvery/time.Minute))
	if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
		t.Errorf("shared/model/README.md does not say %q", want)
	}
}
