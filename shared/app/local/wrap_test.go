package local_test

import (
	"testing"
)

// The soak's fault wrap keeps every ability of every provider of the suite
// (keptAbilities compares each field of service.Abilities, wrapped and not):
// a wrap that hides one (FindNamed, once) fails here, not as a rare seed of
// the soak.
func TestFaultWrapKeepsAbilities(t *testing.T) {
	s := newSuite(t)
	reg := s.l.Service.Core.Providers
	before := *reg
	if len(before.All()) < 2 {
		t.Fatalf("the suite has %d providers, want Bedrock and Anthropic", len(before.All()))
	}
	for _, p := range before.All() {
		if len(before.Abilities(p.Name()).Has()) == 0 {
			t.Errorf("provider %s declares no abilities: the comparison would prove nothing", p.Name())
		}
	}
	newChaos(1, soakRates).wrapProviders(t, s.l)
	for _, p := range reg.All() {
		if _, ok := p.(*chaosProvider); !ok {
			t.Errorf("provider %s was not wrapped", p.Name())
		}
	}
}
