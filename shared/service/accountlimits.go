package service

import (
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// LimitsFor are prov's limits for one model: for a quota-limited provider
// (Bedrock batch inference) the account's Service Quotas for the model, when
// the refresh read them, replace the documented defaults the provider
// declares: the minimum records per job (the on-demand threshold of auto
// mode), the records per job and per input file, and the input-file and job
// sizes (the split). Each part is one input file, so a part is held to both.
// quotaLimited is the provider's Abilities.QuotaLimited.
func (c Models) LimitsFor(prov BatchProvider, quotaLimited bool, modelID string) BatchLimits {
	lim := prov.Limits()
	if !quotaLimited {
		return lim
	}
	m, ok := c.LookupModel(modelID)
	if !ok || m.Account == nil || m.Account.Quotas == nil {
		return lim
	}
	return WithQuotas(lim, m.Account.Quotas)
}

// WithQuotas lays known quotas (non-zero) over lim.
func WithQuotas(lim BatchLimits, q *model.Quotas) BatchLimits {
	if q.MinRecordsPerJob > 0 {
		lim.MinRecords = q.MinRecordsPerJob
	}
	if n := minPositive(q.MaxRecordsPerJob, q.MaxRecordsPerFile); n > 0 {
		lim.MaxRecordsPerPart = n // raised quotas raise it too: the account wins
	}
	if b := minPositive(q.MaxInputFileBytes, q.MaxJobBytes); b > 0 {
		lim.MaxBytesPerPart = b
	}
	return lim
}

// minPositive is the smaller of the positive ones of a and b (0: neither is).
func minPositive[T int | int64](a, b T) T {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// FallbackRate is the on-demand rate a deadline's timing assumes for a model
// whose runtime quotas the account refresh did not read. It is an assumption,
// not a documented default: low, so that batch parts are stopped early rather
// than late; the account's Service Quotas replace it per model.
var FallbackRate = job.Rate{RequestsPerMinute: 50, TokensPerMinute: 100_000}

// RateOf is how fast on-demand calls of a model may go in this account: the
// runtime quotas the refresh read (model.Quotas), each unknown one replaced by
// FallbackRate's.
func (c Models) RateOf(modelID string) job.Rate {
	r := FallbackRate
	m, ok := c.LookupModel(modelID)
	if !ok || m.Account == nil || m.Account.Quotas == nil {
		return r
	}
	if q := m.Account.Quotas; q.RequestsPerMinute > 0 || q.TokensPerMinute > 0 {
		if q.RequestsPerMinute > 0 {
			r.RequestsPerMinute = q.RequestsPerMinute
		}
		if q.TokensPerMinute > 0 {
			r.TokensPerMinute = q.TokensPerMinute
		}
	}
	return r
}
