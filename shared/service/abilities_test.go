package service

import (
	"context"
	"slices"
	"testing"
)

// abilityProvider is a provider that declares the abilities it is given.
type abilityProvider struct {
	missingProvider
	ab Abilities
}

func (p abilityProvider) Abilities() Abilities { return p.ab }

// The registry holds each provider's declared abilities by name (none for a
// provider it was not given), and Has names every field that is set.
func TestRegistryAbilities(t *testing.T) {
	finder := func(context.Context, string) (string, error) { return "", nil }
	reg := NewRegistry(
		abilityProvider{missingProvider: "a", ab: Abilities{QuotaLimited: true, FindNamed: finder}},
		abilityProvider{missingProvider: "b"},
	)
	cases := []struct {
		name string
		want []string
		find bool
	}{
		{"a", []string{"QuotaLimited", "FindNamed"}, true},
		{"b", nil, false},
		{"not given", nil, false},
	}
	for _, c := range cases {
		ab := reg.Abilities(c.name)
		if got := ab.Has(); !slices.Equal(got, c.want) {
			t.Errorf("%s: has %v, want %v", c.name, got, c.want)
		}
		if ab.Finds() != c.find {
			t.Errorf("%s: finds %v, want %v", c.name, ab.Finds(), c.find)
		}
	}
}
