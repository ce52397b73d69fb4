package batch

import (
	"errors"
	"slices"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// namedProvider is a provider test double that only knows its name and models;
// pickProvider asks nothing else.
type namedProvider struct {
	service.BatchProvider
	name   string
	models []string
}

func (p namedProvider) Name() string             { return p.name }
func (p namedProvider) Models() []string         { return p.models }
func (p namedProvider) Allows(model string) bool { return slices.Contains(p.models, model) }

func TestPickProvider(t *testing.T) {
	s := &Service{Core: &service.Core{Providers: service.NewRegistry(
		namedProvider{name: "first", models: []string{"m1", "m2"}},
		namedProvider{name: "second", models: []string{"m2", "m3"}},
	)}}
	tests := []struct {
		name, provider, model string
		want                  string // provider picked, or the field of the error
		wantModelErr          bool
	}{
		{"only the first has it", "", "m1", "first", false},
		{"only the second has it", "", "m3", "second", false},
		{"both have it: registry order", "", "m2", "first", false},
		{"named provider", "second", "m2", "second", false},
		{"named provider without the model", "second", "m1", "", true},
		{"nobody has it", "", "m9", "", true},
		{"unknown provider", "third", "m1", "provider", false},
		{"no model", "", "", "model", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := &SubmitRequest{Provider: tc.provider, Model: tc.model}
			p, err := s.pickProvider(req)
			var me *service.ModelError
			var fe *job.FieldError
			switch {
			case tc.wantModelErr:
				if !errors.As(err, &me) {
					t.Fatalf("got %v, want a model error", err)
				}
			case tc.want == "provider" || tc.want == "model":
				if !errors.As(err, &fe) || fe.Field != tc.want {
					t.Fatalf("got %v, want a field error on %s", err, tc.want)
				}
			case err != nil:
				t.Fatal(err)
			case p.Name() != tc.want || req.Provider != tc.want:
				t.Fatalf("picked %s (request says %q), want %s", p.Name(), req.Provider, tc.want)
			}
		})
	}
}
