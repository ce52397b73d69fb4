package model

import (
	"encoding/json"
	"os"
	"regexp"
	"testing"
)

// TestReadmeOverrideExample: the override document README.md shows is one
// the catalog takes, with the effects the README describes: a price
// changed, an alias added, a model removed.
func TestReadmeOverrideExample(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)override document:\n\n```json\n(.*?)\n```").FindSubmatch(b)
	if m == nil {
		t.Fatal("README.md shows no override document")
	}
	var doc struct {
		Models []struct {
			ID      string   `json:"id"`
			Aliases []string `json:"aliases"`
			Prices  struct {
				Input *float64 `json:"input"`
			} `json:"prices"`
		} `json:"models"`
		Remove []string `json:"remove"`
	}
	if err := json.Unmarshal(m[1], &doc); err != nil {
		t.Fatal(err)
	}
	c, err := Default().Merge(m[1])
	if err != nil {
		t.Fatalf("the README's override is refused: %v", err)
	}
	for _, e := range doc.Models {
		got, ok := c.Lookup(e.ID)
		if !ok {
			t.Fatalf("%s: not in the merged catalog", e.ID)
		}
		if e.Prices.Input != nil && (got.Prices.Input == nil || *got.Prices.Input != *e.Prices.Input) {
			t.Errorf("%s: input price %v, the override sets %v", e.ID, got.Prices.Input, *e.Prices.Input)
		}
		for _, a := range e.Aliases {
			if via, ok := c.Lookup(a); !ok || via.ID != e.ID {
				t.Errorf("alias %s does not resolve to %s", a, e.ID)
			}
		}
	}
	for _, id := range doc.Remove {
		if _, ok := Default().Lookup(id); !ok {
			t.Errorf("the README removes %s, which the shipped catalog lacks", id)
		}
		if _, ok := c.Lookup(id); ok {
			t.Errorf("%s is still in the merged catalog", id)
		}
	}
}

// TestReadmeBatchHalfPrice: README.md sells batch as "about half the
// on-demand price"; every catalog model priced both ways is.
func TestReadmeBatchHalfPrice(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`about half the\s+on-demand price`).Match(b) {
		t.Fatal("README.md no longer says batch is about half the on-demand price: update this test")
	}
	n := 0
	for _, m := range Default().All() {
		for _, p := range []struct {
			name            string
			onDemand, batch *float64
		}{{"input", m.Prices.Input, m.Prices.BatchInput}, {"output", m.Prices.Output, m.Prices.BatchOutput}} {
			if p.onDemand == nil || p.batch == nil || *p.onDemand == 0 {
				continue
			}
			n++
			if r := *p.batch / *p.onDemand; r < 0.45 || r > 0.55 {
				t.Errorf("%s: batch %s price is %.0f%% of on demand", m.ID, p.name, r*100)
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d prices compared", n)
	}
}
