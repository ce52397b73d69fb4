package batch

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// namedProvider is a provider test double that only knows its name and models;
// pickProvider asks nothing else.
type namedProvider struct {
	service.BatchProvider
	name   string
	models []string
}

func (p namedProvider) Name() string                 { return p.name }
func (p namedProvider) Models() []string             { return p.models }
func (p namedProvider) Allows(model string) bool     { return slices.Contains(p.models, model) }
func (p namedProvider) Abilities() service.Abilities { return service.Abilities{} }

func TestPickProvider(t *testing.T) {
	s := &Service{Providers: service.NewRegistry(
		namedProvider{name: "first", models: []string{"m1", "m2"}},
		namedProvider{name: "second", models: []string{"m2", "m3"}},
	)}
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

// An end-of-life model is refused for its end of life, naming the date and
// the successor, even where the deployment's allow-list does not list it:
// "not allowed; use one of ..." would send the user looking for a
// deployment that allows it.
func TestEndOfLifeRefusedOutsideTheAllowList(t *testing.T) {
	haiku45 := "anthropic.claude-haiku-4-5-20251001-v1:0"
	day := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	s := &Service{Providers: service.NewRegistry(namedProvider{name: "bedrock", models: []string{haiku45}}),
		Models: service.Models{Catalog: model.Default().Filter("", []string{haiku45})},
		Clock:  func() time.Time { return day }}
	for _, tc := range []struct{ id, eol, successor string }{
		{"anthropic.claude-3-5-haiku-20241022-v1:0", "2026-06-19", haiku45},
		{"us.anthropic.claude-3-5-haiku-20241022-v1:0", "2026-06-19", haiku45},
		// Bedrock's end of life of Claude Sonnet 4 (the legacy lifecycle page).
		{"anthropic.claude-sonnet-4-20250514-v1:0", "2026-10-14", "anthropic.claude-sonnet-4-6"},
	} {
		_, err := s.pickProvider(&SubmitRequest{Model: tc.id})
		var fe *job.FieldError
		if !errors.As(err, &fe) || fe.Field != "model" {
			t.Errorf("%s: %v, want a model field error for its end of life", tc.id, err)
			continue
		}
		for _, w := range []string{"end of life", tc.eol, tc.successor} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not name %q", tc.id, err, w)
			}
		}
	}
	var me *service.ModelError
	if _, err := s.pickProvider(&SubmitRequest{Model: "amazon.nova-pro-v1:0"}); !errors.As(err, &me) {
		t.Errorf("an active model outside the allow-list: %v, want not allowed", err)
	}
}
