package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
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

// provider returns the provider of a job; Bedrock keeps its own field so the
// existing wiring stays as it is.
func (s *Service) provider(name string) BatchProvider {
	if name == "" || name == job.ProviderBedrock {
		return s.Bedrock
	}
	if p, ok := s.Providers[name]; ok {
		return p
	}
	return missingProvider(name)
}

// pickProvider settles req.Provider and checks the model against that provider's list.
func (s *Service) pickProvider(req *SubmitRequest) error {
	anthropic := s.Providers[job.ProviderAnthropic] != nil
	allowed := slices.Clone(s.Models)
	if anthropic {
		allowed = append(allowed, s.AnthropicModels...)
	}
	switch req.Provider {
	case "":
		// Default stays Bedrock; the model id decides when only Anthropic has it.
		req.Provider = job.ProviderBedrock
		if anthropic && !slices.Contains(s.Models, req.Model) && slices.Contains(s.AnthropicModels, req.Model) {
			req.Provider = job.ProviderAnthropic
		}
	case job.ProviderBedrock:
		allowed = s.Models
	case job.ProviderAnthropic:
		if !anthropic {
			return job.Fieldf("provider", "anthropic is not configured on this deployment; use bedrock")
		}
		allowed = s.AnthropicModels
	default:
		return job.Fieldf("provider", "must be bedrock or anthropic (got %q)", req.Provider)
	}
	if req.Model == "" {
		return job.Fieldf("model", "required; allowed models: %v", allowed)
	}
	models := s.Models
	if req.Provider == job.ProviderAnthropic {
		models = s.AnthropicModels
	}
	if !slices.Contains(models, req.Model) {
		return &ModelError{Model: req.Model, Allowed: allowed}
	}
	return nil
}

func (s *Service) minRecordsOf(provider string) int {
	if provider == job.ProviderAnthropic {
		return job.AnthropicMinRecords
	}
	return s.minRecords()
}

// anthropicParts splits a batch into Message Batches of at most 100,000
// requests and 256 MB each (greedy: Anthropic has no per-batch minimum). It
// encodes every record once to measure it; a record that cannot be encoded is
// reported here, before anything is stored.
func (s *Service) anthropicParts(req SubmitRequest) ([]int, error) {
	maxN := s.MaxRecordsPerPart
	if maxN <= 0 {
		maxN = job.AnthropicMaxRequests
	}
	// The request body wraps the lines in {"requests":[...]}, with a comma between lines.
	const envelope = len(`{"requests":[]}`)
	enc := s.provider(job.ProviderAnthropic)
	var parts []int
	count, size := 0, envelope
	for i := range req.Records {
		line, err := enc.EncodeRecord(i, req.Model, req.Records[i], req.Params)
		if err != nil {
			return nil, err
		}
		n := len(line) + 1
		if n+envelope > job.AnthropicMaxBytes {
			return nil, job.Fieldf(fmt.Sprintf("records[%d]", i), "encodes to %d bytes, over the %d bytes of a whole Message Batch", len(line), job.AnthropicMaxBytes)
		}
		if count == maxN || size+n > job.AnthropicMaxBytes {
			parts = append(parts, count)
			count, size = 0, envelope
		}
		count++
		size += n
	}
	return append(parts, count), nil
}

// DefaultBedrockQuota is Bedrock's default quota of submitted + in-progress batch
// jobs per model.
const DefaultBedrockQuota = 20

// quotaOf is the configured quota of a Bedrock model.
func (s *Service) quotaOf(model string) int {
	if q, ok := s.Quota[model]; ok && q > 0 {
		return q
	}
	if s.DefaultQuota > 0 {
		return s.DefaultQuota
	}
	return DefaultBedrockQuota
}

// roomAtSubmit is how many parts of a new job may start now: all for Anthropic;
// for Bedrock, what the model's quota leaves, and none while older jobs of the
// model wait, so queued jobs start in the order they came.
func (s *Service) roomAtSubmit(ctx context.Context, j *job.Job) (int, error) {
	if j.Provider != job.ProviderBedrock {
		return -1, nil
	}
	inflight, err := s.Store.ListInFlight(ctx, job.ProviderBedrock, s.now().Add(1), job.MaxPageSize)
	if err != nil {
		return 0, fmt.Errorf("count in-flight Bedrock jobs: %w", err)
	}
	active, waiting := 0, false
	for _, o := range inflight {
		if o.Model != j.Model || o.ID == j.ID {
			continue
		}
		for _, p := range o.Parts {
			switch {
			case occupiesQuota(p):
				active++
			case p.Status == job.StatusQueued:
				waiting = true
			}
		}
	}
	if waiting {
		return 0, nil
	}
	return max(0, s.quotaOf(j.Model)-active), nil
}

// occupiesQuota: Bedrock counts jobs submitted and in progress against the quota.
func occupiesQuota(p job.Part) bool {
	return p.Ref != "" && p.Status.Rank() >= job.StatusSubmitted.Rank() && p.Status.Rank() <= job.StatusCancelling.Rank()
}

// WaitingForQuota is the provider_status of a part queued behind the quota.
const WaitingForQuota = "WaitingForQuota"

// markWaiting records on a queued part that it waits for room at the provider.
func (s *Service) markWaiting(ctx context.Context, id string, idx int) (*job.Job, error) {
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		p := &j.Parts[idx]
		if p.Status != job.StatusQueued || p.ProviderStatus == WaitingForQuota {
			return store.ErrNoChange
		}
		p.ProviderStatus = WaitingForQuota
		s.settle(j, s.now())
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return nil, fmt.Errorf("mark job %s part %d waiting: %w", id, idx, err)
	}
	return j, nil
}

func busy(err error) bool {
	return errors.Is(err, ErrQuotaFull) || errors.Is(err, ErrProviderBusy)
}

func submittedWord(provider string) string {
	if provider == job.ProviderAnthropic {
		return job.AnthropicInProgress
	}
	return job.BedrockSubmitted
}

// fetchResults copies a part's results into object storage once, for providers
// that only stream them. An existing copy is complete (blob writes are atomic),
// so a resumed ingest reads it again from its checkpoint.
func (s *Service) fetchResults(ctx context.Context, j *job.Job, p job.Part) error {
	f, ok := s.provider(j.Provider).(ResultFetcher)
	if !ok {
		return nil
	}
	outs, _ := s.provider(j.Provider).OutputFiles(p)
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
