package refresh

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/store/localstore"
)

// prices is a PriceReader listing Nova Lite's input at a price of its own.
type prices struct {
	n     int
	input float64
	fail  error
}

func (p *prices) Read(_ context.Context, a *model.Account) error {
	p.n++
	if p.fail != nil {
		return p.fail
	}
	in := p.input
	a.PriceList = &model.PriceList{Endpoint: "us-east-1", Models: map[string]model.ListedPrices{
		"amazon.nova-lite-v1:0": {Name: "Nova Lite", Prices: model.Prices{Input: &in}, AsOf: map[string]string{"input": "2026-11-01"}}}}
	return nil
}

func TestRefreshReadsPricesWithTheAccountFacts(t *testing.T) {
	st, err := localstore.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	s := newService(t, st, &reader{access: model.AccessGranted}, &now)
	p := &prices{input: 0.07}
	s.Prices = p
	if _, err := s.Fresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	m, _ := s.Catalog.Lookup("amazon.nova-lite-v1:0")
	if p.n != 1 || *m.Prices.Input != 0.07 || m.Listing().PriceSources["input"].Source != model.SourcePriceList {
		t.Fatalf("after the first refresh: %d price reads, input %v, sources %+v", p.n, *m.Prices.Input, m.Listing().PriceSources)
	}

	// A function that only loads the stored snapshot sees the same prices.
	loader := newService(t, st, nil, &now)
	if _, err := loader.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if lm, _ := loader.Catalog.Lookup("amazon.nova-lite-v1:0"); *lm.Prices.Input != 0.07 {
		t.Errorf("loaded snapshot: input %v, want the stored Price List's 0.07", *lm.Prices.Input)
	}

	// Within a day: no read. A day later the Price List fails: the stored prices stay, the gap is named.
	now = now.Add(2 * time.Hour)
	if _, err := s.Fresh(t.Context()); err != nil || p.n != 1 {
		t.Fatalf("fresh snapshot: err %v, %d price reads", err, p.n)
	}
	now = now.Add(25 * time.Hour)
	p.fail = errors.New("AccessDeniedException: pricing:GetProducts")
	a, err := s.Fresh(t.Context())
	if err != nil || p.n != 2 {
		t.Fatalf("stale snapshot: err %v, %d price reads", err, p.n)
	}
	if len(a.Gaps) != 1 || !strings.HasPrefix(a.Gaps[0], model.GapPriceList) {
		t.Errorf("gaps %q", a.Gaps)
	}
	if m, _ := s.Catalog.Lookup("amazon.nova-lite-v1:0"); *m.Prices.Input != 0.07 {
		t.Errorf("after a failed price read: input %v, want the stored 0.07", *m.Prices.Input)
	}
}
