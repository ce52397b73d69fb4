package batch

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// TokenCounter counts one record's input tokens exactly, as the provider
// would bill them (Bedrock's CountTokens).
type TokenCounter interface {
	CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error)
}

// CountSample is how many records a dry run counts exactly; a job with no
// more records is counted whole. 400 keeps the 99% interval near ±7% for
// prompts whose lengths vary as much as their mean (200 gave ±10%).
const CountSample = 400

// t99 is Student's t for a two-sided 99% interval with CountSample−1 = 399
// degrees of freedom (2.588; any t-table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
const t99 = 2.588

// TokenCount is a dry run's counted input: a random sample of records counted
// by the provider, extrapolated to every record with a 99% t-interval
// (finite-population corrected); exact when every record was counted.
type TokenCount struct {
	Method     string  `json:"method"`
	Sampled    int     `json:"sampled"`
	Records    int     `json:"records"`
	Estimate   int64   `json:"estimate"`
	Low        int64   `json:"low"`
	High       int64   `json:"high"`
	Confidence float64 `json:"confidence"`
}

// countInput counts a sample of req's records with s.Counter. The sample is
// drawn with a seed from the records' ids, so the same dry run gives the
// same figures. Nil when no counter is wired or the records are not prompts.
func (s *Service) countInput(ctx context.Context, req SubmitRequest, m *model.Model) (*TokenCount, error) {
	n := len(req.Records)
	if s.Counter == nil || n == 0 || m == nil || m.Provider != "bedrock" || m.Task != model.TaskText {
		return nil, nil
	}
	h := fnv.New64a()
	for i := range req.Records {
		h.Write([]byte(req.Records[i].ID))
		h.Write([]byte{0})
	}
	rng := rand.New(rand.NewPCG(h.Sum64(), uint64(n)))
	idx := rng.Perm(n)[:min(n, CountSample)]
	counts := make([]float64, len(idx))
	for j, i := range idx {
		c, err := s.Counter.CountTokens(ctx, m.ID, req.Records[i], req.Params)
		if err != nil {
			return nil, err
		}
		counts[j] = float64(c)
	}
	return extrapolate(counts, n), nil
}

// extrapolate scales a sample's per-record counts to n records with a 99%
// t-interval on the total, finite-population corrected.
func extrapolate(counts []float64, n int) *TokenCount {
	k := len(counts)
	var sum, sumSq float64
	for _, c := range counts {
		sum += c
		sumSq += c * c
	}
	mean := sum / float64(k)
	tc := &TokenCount{Method: "Bedrock CountTokens on a random sample, 99% t-interval", Sampled: k, Records: n,
		Estimate: int64(math.Round(mean * float64(n))), Confidence: 0.99}
	if k == n {
		tc.Method = "Bedrock CountTokens on every record"
		tc.Low, tc.High, tc.Confidence = tc.Estimate, tc.Estimate, 1
		return tc
	}
	variance := max(0, (sumSq-float64(k)*mean*mean)/float64(k-1))
	half := t99 * math.Sqrt(variance/float64(k)) * math.Sqrt(float64(n-k)/float64(n-1)) * float64(n)
	tc.Low = int64(math.Floor(mean*float64(n) - half))
	tc.High = int64(math.Ceil(mean*float64(n) + half))
	return tc
}
