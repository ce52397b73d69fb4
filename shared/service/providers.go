package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// ErrProviderBusy: the provider cannot take a batch right now (rate limit,
// overload); the part stays queued and the reconciler submits it later.
var ErrProviderBusy = errors.New("provider busy")

// ResultFetcher is a provider whose results are not in object storage when the
// batch ends (Anthropic streams them over HTTP): FetchResults copies them to uri
// so ingest reads them with checkpoints like any other output file.
type ResultFetcher interface {
	FetchResults(ctx context.Context, part job.Part, uri string) error
}

// Registry holds the batch providers of a deployment by name, in the order they
// were given (the first that allows a model runs it when a submit names none).
type Registry struct {
	list   []BatchProvider
	byName map[string]BatchProvider
}

// NewRegistry builds a registry; nil providers (not configured) are left out.
func NewRegistry(providers ...BatchProvider) *Registry {
	r := &Registry{byName: map[string]BatchProvider{}}
	for _, p := range providers {
		if p == nil {
			continue
		}
		r.list = append(r.list, p)
		r.byName[p.Name()] = p
	}
	return r
}

// All lists the providers in registry order.
func (r *Registry) All() []BatchProvider {
	if r == nil {
		return nil
	}
	return r.list
}

// Lookup returns the provider of that name.
func (r *Registry) Lookup(name string) (BatchProvider, bool) {
	if r == nil {
		return nil, false
	}
	p, ok := r.byName[name]
	return p, ok
}

// Get returns the provider of that name, or one that answers every call with a
// clear error (a job names a provider this deployment was not given).
func (r *Registry) Get(name string) BatchProvider {
	if p, ok := r.Lookup(name); ok {
		return p
	}
	return missingProvider(name)
}

// names lists the providers' names as "a, b or c".
func (r *Registry) names() string {
	var n []string
	for _, p := range r.All() {
		n = append(n, p.Name())
	}
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

func (r *Registry) models() []string {
	var m []string
	for _, p := range r.All() {
		m = append(m, p.Models()...)
	}
	return m
}

func (s *Service) provider(name string) BatchProvider { return s.Providers.Get(name) }

// pickProvider settles req.Provider and checks the model against that
// provider's list: a named provider must be registered and allow the model; no
// name picks the first provider that allows it.
func (s *Service) pickProvider(req *SubmitRequest) (BatchProvider, error) {
	reg := s.Providers
	if req.Provider != "" {
		p, ok := reg.Lookup(req.Provider)
		if !ok {
			return nil, job.Fieldf("provider", "must be %s on this deployment (got %q)", reg.names(), truncate(req.Provider, 40))
		}
		if req.Model == "" {
			return nil, job.Fieldf("model", "required; allowed models: %v", p.Models())
		}
		if !p.Allows(req.Model) {
			return nil, &ModelError{Model: req.Model, Allowed: p.Models()}
		}
		return p, nil
	}
	if req.Model == "" {
		return nil, job.Fieldf("model", "required; allowed models: %v", reg.models())
	}
	for _, p := range reg.All() {
		if p.Allows(req.Model) {
			req.Provider = p.Name()
			return p, nil
		}
	}
	return nil, &ModelError{Model: req.Model, Allowed: reg.models()}
}

// fetchResults copies a part's results into object storage once, for providers
// that only stream them. An existing copy is complete (blob writes are atomic),
// so a resumed ingest reads it again from its checkpoint.
func (s *Service) fetchResults(ctx context.Context, j *job.Job, p job.Part) error {
	prov := s.provider(j.Provider)
	f, ok := prov.(ResultFetcher)
	if !ok {
		return nil
	}
	outs, _ := prov.OutputFiles(p)
	for _, uri := range outs {
		rc, err := s.Blobs.Open(ctx, uri, 0)
		if err == nil {
			rc.Close()
			continue
		}
		if !errors.Is(err, blob.ErrNotFound) {
			return fmt.Errorf("check results of %s part %d: %w", j.ID, p.Index, err)
		}
		if err := f.FetchResults(ctx, p, uri); err != nil {
			return fmt.Errorf("fetch results of %s part %d: %w", j.ID, p.Index, err)
		}
	}
	return nil
}

// missingProvider answers every call with a clear error: a job names a
// provider this deployment was not given (configuration drift).
type missingProvider string

func (m missingProvider) err() error {
	return fmt.Errorf("provider %q is not configured on this deployment", string(m))
}
func (m missingProvider) Name() string                                        { return string(m) }
func (m missingProvider) Models() []string                                    { return nil }
func (m missingProvider) Allows(string) bool                                  { return false }
func (m missingProvider) Limits() BatchLimits                                 { return BatchLimits{Title: string(m)} }
func (m missingProvider) Submit(context.Context, BatchSubmit) (string, error) { return "", m.err() }
func (m missingProvider) Get(context.Context, string) (BatchState, error) {
	return BatchState{}, m.err()
}
func (m missingProvider) Stop(context.Context, string) error { return m.err() }
func (m missingProvider) EncodeRecord(int, string, job.Input, job.Params) ([]byte, error) {
	return nil, m.err()
}
func (m missingProvider) ParseOutputLine([]byte) (job.Record, error) { return job.Record{}, m.err() }
func (m missingProvider) OutputFiles(job.Part) ([]string, string)    { return nil, "" }
func (m missingProvider) Outcome(string, bool) (job.ProviderOutcome, bool) {
	return job.ProviderOutcome{}, false
}
func (m missingProvider) Later(string, string) bool     { return false }
func (m missingProvider) Final(job.Part) job.Status     { return "" }
func (m missingProvider) SubmittedStatus() string       { return "" }
func (m missingProvider) MissingOutputOK(job.Part) bool { return false }
