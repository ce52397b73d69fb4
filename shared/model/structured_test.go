package model

import "testing"

// Every model the structured-outputs table names is a catalog row of the
// provider its APIs belong to, so a renamed or dropped row cannot leave a
// model silently prompted.
func TestStructuredOutputsNameCatalogRows(t *testing.T) {
	providerOf := map[string]string{APIAnthropicBatch: ProviderAnthropic, APIBedrockConverse: ProviderBedrock, APIBedrockConverseBatch: ProviderBedrock}
	for id, apis := range structuredOutputs {
		m, ok := Default().Lookup(id)
		if !ok || m.ID != id {
			t.Errorf("%s: not a catalog row", id)
			continue
		}
		for _, api := range apis {
			if providerOf[api] != m.Provider {
				t.Errorf("%s (%s): API %s belongs to provider %q", id, m.Provider, api, providerOf[api])
			}
			if _, native := NativeOutput(m, api); !native {
				t.Errorf("%s: NativeOutput(%s) = false", id, api)
			}
		}
	}
	if _, native := NativeOutput(nil, APIBedrockConverse); native {
		t.Error("an unknown model is constrained natively")
	}
}
