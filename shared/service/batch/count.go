package batch

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// TokenCounter counts one record's input tokens exactly, as the provider
// would bill them: Bedrock's CountTokens (the on-demand runtime) or
// Anthropic's Token Count API (the Anthropic batch provider itself).
type TokenCounter interface {
	CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error)
}

// countFunc is a provider's Abilities.CountTokens as a TokenCounter.
type countFunc func(ctx context.Context, model string, in job.Input, p job.Params) (int64, error)

func (f countFunc) CountTokens(ctx context.Context, model string, in job.Input, p job.Params) (int64, error) {
	return f(ctx, model, in, p)
}

// countMethods name each provider's counting API in a dry run's answer.
var countMethods = map[string]string{model.ProviderBedrock: "Bedrock CountTokens", model.ProviderAnthropic: "Anthropic count_tokens"}

// countWorkers is how many count calls a dry run has in flight: 400 calls
// one after another take about a minute at real latencies. Kept low because
// counting has its own per-minute limit (Anthropic tier 1: 100 a minute);
// the SDKs retry a throttled call after its retry-after.
const countWorkers = 4

// CountSample is how many records a dry run counts exactly; a job with no
// more records is counted whole. 400 keeps the 99% interval near ±7% for
// prompts whose lengths vary as much as their mean (200 gave ±10%).
const CountSample = 400

// minCountSample is the fewest counts a dry run extrapolates from when the
// provider throttles counting part way (fewer: the estimate stands).
const minCountSample = 30

// t99 is Student's t for a two-sided 99% interval with df degrees of
// freedom, by the Cornish-Fisher expansion of Abramowitz & Stegun 26.7.5
// around the normal quantile 2.5758: 2.588 at 399 (CountSample−1), 2.756 at
// 29, as t-tables give (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
func t99(df int) float64 {
	const z = 2.5758293035489
	v := float64(df)
	z3, z5, z7, z9 := z*z*z, math.Pow(z, 5), math.Pow(z, 7), math.Pow(z, 9)
	return z + (z3+z)/4/v + (5*z5+16*z3+3*z)/96/(v*v) + (3*z7+19*z5+17*z3-15*z)/384/(v*v*v) +
		(79*z9+776*z7+1482*z5-1920*z3-945*z)/92160/(v*v*v*v)
}

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
	// Partial says why fewer records than planned were counted (the provider
	// throttled counting part way); the interval is from those counted.
	Partial string `json:"partial,omitempty"`
}

// counter is who counts m's records exactly: the batch provider when it
// counts (Anthropic), else Bedrock's CountTokens through the on-demand
// runtime for a Bedrock text model. Nil when nobody counts them.
func (s *Service) counter(prov service.BatchProvider, m *model.Model) TokenCounter {
	if m == nil || m.Task != model.TaskText {
		return nil
	}
	if count := s.abilities(prov).CountTokens; count != nil {
		return countFunc(count)
	}
	if m.Provider == model.ProviderBedrock && s.Counter != nil {
		return s.Counter
	}
	return nil
}

// countInput counts a sample of req's records with the provider's counter.
// The sample is drawn with a seed from the records' ids, so the same dry run
// gives the same figures. Nil when nobody counts this model's records; an
// error when a count failed (the caller says so and keeps the estimate). When
// the provider throttles counting part way (service.ErrProviderBusy), the
// counts made so far are still a random sample (the planned ones are a
// random order, and throttling does not depend on a record's content): with
// at least minCountSample of them the interval is drawn from those, wider,
// and Partial says so.
func (s *Service) countInput(ctx context.Context, req SubmitRequest, prov service.BatchProvider, m *model.Model) (*TokenCount, error) {
	n := len(req.Records)
	tc := s.counter(prov, m)
	if tc == nil || n == 0 {
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
	done := make([]bool, len(idx))
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, countWorkers)
	var wg sync.WaitGroup
	for range countWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				c, err := tc.CountTokens(ctx, m.ID, req.Records[idx[j]], req.Params)
				if err != nil {
					errs <- err
					cancel()
					return
				}
				counts[j], done[j] = float64(c), true
			}
		}()
	}
feed:
	for j := range idx {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := parent.Err(); err != nil {
		return nil, err // the caller's context ended
	}
	method := countMethods[m.Provider]
	select {
	case err := <-errs:
		var got []float64
		for j := range idx {
			if done[j] {
				got = append(got, counts[j])
			}
		}
		if !errors.Is(err, service.ErrProviderBusy) || len(got) < minCountSample {
			return nil, err
		}
		c := extrapolate(got, n, method)
		c.Partial = fmt.Sprintf("%s throttled counting after %d of %d planned records (%v); the interval is drawn from the %d counted", method, len(got), len(idx), err, len(got))
		return c, nil
	default:
	}
	return extrapolate(counts, n, method), nil
}

// extrapolate scales a sample's per-record counts to n records with a 99%
// t-interval on the total, finite-population corrected.
func extrapolate(counts []float64, n int, method string) *TokenCount {
	k := len(counts)
	var sum, sumSq float64
	for _, c := range counts {
		sum += c
		sumSq += c * c
	}
	mean := sum / float64(k)
	tc := &TokenCount{Method: method + " on a random sample, 99% t-interval", Sampled: k, Records: n,
		Estimate: int64(math.Round(mean * float64(n))), Confidence: 0.99}
	if k == n {
		tc.Method = method + " on every record"
		tc.Low, tc.High, tc.Confidence = tc.Estimate, tc.Estimate, 1
		return tc
	}
	variance := max(0, (sumSq-float64(k)*mean*mean)/float64(k-1))
	half := t99(k-1) * math.Sqrt(variance/float64(k)) * math.Sqrt(float64(n-k)/float64(n-1)) * float64(n)
	tc.Low = int64(math.Floor(mean*float64(n) - half))
	tc.High = int64(math.Ceil(mean*float64(n) + half))
	return tc
}
