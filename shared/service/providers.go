package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// ErrProviderBusy: the provider cannot take a batch right now (rate limit,
// overload); the part stays queued and the reconciler submits it later.
var ErrProviderBusy = errors.New("provider busy")

// Registry holds the batch providers of a deployment by name, in the order they
// were given (the first that allows a model runs it when a submit names none).
type Registry struct {
	list      []BatchProvider
	byName    map[string]BatchProvider
	abilities map[string]Abilities
}

// NewRegistry builds a registry; nil providers (not configured) are left out.
func NewRegistry(providers ...BatchProvider) *Registry {
	r := &Registry{byName: map[string]BatchProvider{}, abilities: map[string]Abilities{}}
	for _, p := range providers {
		if p == nil {
			continue
		}
		r.list = append(r.list, p)
		r.byName[p.Name()] = p
		r.abilities[p.Name()] = p.Abilities()
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

// Abilities are what the provider of that name declared when it was
// registered; none for a provider this deployment was not given. The flows
// read a provider's abilities here, and only here.
func (r *Registry) Abilities(name string) Abilities {
	if r == nil {
		return Abilities{}
	}
	return r.abilities[name]
}

// Names lists the providers' names as "a, b or c".
func (r *Registry) Names() string {
	var n []string
	for _, p := range r.All() {
		n = append(n, p.Name())
	}
	if len(n) < 2 {
		return strings.Join(n, "")
	}
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}

// Models lists the models of every provider.
func (r *Registry) Models() []string {
	var m []string
	for _, p := range r.All() {
		m = append(m, p.Models()...)
	}
	return m
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
func (m missingProvider) Abilities() Abilities                                { return Abilities{} }
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
