package refresh

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// reader is a BedrockReader that counts its reads and may fail.
type reader struct {
	n      int
	fail   error
	access string
}

func (r *reader) Read(_ context.Context, a *model.Account) error {
	r.n++
	if r.fail != nil {
		return r.fail
	}
	a.Bedrock = []model.AccountModel{{ID: "amazon.nova-lite-v1:0", Name: "Nova Lite", Lifecycle: "ACTIVE", Output: []string{"TEXT"}, Access: r.access}}
	return nil
}

func newService(t *testing.T, st store.Snapshots, r BedrockReader, now *time.Time) *Service {
	return &Service{Store: st, Catalog: model.Default().Filter("", []string{"amazon.nova-lite-v1:0"}), Bedrock: r, Region: "us-east-1",
		Now: func() time.Time { return *now }, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
}

func TestFresh(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		storedAt  *time.Time // nil: nothing stored
		fail      error
		wantReads int
		wantErr   bool
		wantFacts bool // the catalog carries account facts afterwards
	}{
		{"nothing stored: read the account", nil, nil, 1, false, true},
		{"stored an hour ago: no read", ptr(t0.Add(-time.Hour)), nil, 0, false, true},
		{"stored 25 hours ago: read again", ptr(t0.Add(-25 * time.Hour)), nil, 1, false, true},
		{"stale and the read fails: the stored facts stay", ptr(t0.Add(-25 * time.Hour)), errors.New("AccessDenied"), 1, true, true},
		{"nothing stored and the read fails: the embedded catalog stays", nil, errors.New("AccessDenied"), 1, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := localstore.Open(":memory:")
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			now := t0
			if c.storedAt != nil {
				at := *c.storedAt
				seed := newService(t, st, &reader{access: model.AccessGranted}, &at)
				if _, err := seed.Refresh(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			r := &reader{fail: c.fail, access: model.AccessDenied}
			s := newService(t, st, r, &now)
			_, err = s.Fresh(t.Context())
			if (err != nil) != c.wantErr || r.n != c.wantReads {
				t.Fatalf("Fresh: err %v, %d reads; want error %v, %d reads", err, r.n, c.wantErr, c.wantReads)
			}
			m, _ := s.Catalog.Lookup("amazon.nova-lite-v1:0")
			if (m.Account != nil) != c.wantFacts {
				t.Errorf("facts laid over the catalog: %+v, want %v", m.Account, c.wantFacts)
			}
		})
	}
}

// TestRefreshConflict: two refreshes that read the same stored version: the
// second to store loses and uses the winner's snapshot.
func TestRefreshConflict(t *testing.T) {
	st, err := localstore.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	winner := newService(t, st, &reader{access: model.AccessGranted}, &now)
	loser := newService(t, &racing{Snapshots: st, before: func() {
		if _, err := winner.Refresh(context.Background()); err != nil {
			t.Error(err)
		}
	}}, &reader{access: model.AccessDenied}, &now)
	a, err := loser.Refresh(t.Context())
	if err != nil || a.Version != 1 || a.Bedrock[0].Access != model.AccessGranted {
		t.Fatalf("loser: %+v, %v; want the winner's version 1", a, err)
	}
	if m, _ := loser.Catalog.Lookup("amazon.nova-lite-v1:0"); m.Account.Access != model.AccessGranted {
		t.Errorf("loser's catalog: %+v", m.Account)
	}
}

// racing lets another writer store just before this one's first put.
type racing struct {
	store.Snapshots
	before func()
}

func (r *racing) PutSnapshot(ctx context.Context, key string, prev int64, data []byte, at time.Time) (int64, error) {
	if r.before != nil {
		f := r.before
		r.before = nil
		f()
	}
	return r.Snapshots.PutSnapshot(ctx, key, prev, data, at)
}

func ptr[T any](v T) *T { return &v }
