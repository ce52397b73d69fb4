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
