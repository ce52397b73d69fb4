package batch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// The 99% interval is calibrated: over many random samples of one skewed
// population, about 99% of intervals contain the true total (at least 97%
// here, so the check has room for chance but fails a half-width that is
// too narrow), and a sample of every record is exact.
func TestExtrapolateCoverage(t *testing.T) {
	const n = 5000
	pop := make([]float64, n)
	var total float64
	r := rand.New(rand.NewPCG(1, 2))
	for i := range pop {
		pop[i] = float64(1 + r.IntN(20)*r.IntN(20)) // skewed: many short, a few long
		total += pop[i]
	}
	const trials = 2000
	in := 0
	for range trials {
		idx := r.Perm(n)[:CountSample]
		s := make([]float64, len(idx))
		for j, i := range idx {
			s[j] = pop[i]
		}
		c := extrapolate(s, n, "test")
		if float64(c.Low) <= total && total <= float64(c.High) {
			in++
		}
	}
	t.Logf("coverage %d of %d", in, trials)
	if cov := float64(in) / trials; cov < 0.97 || cov > 0.999 {
		t.Errorf("coverage %.3f over %d samples, want about 0.99", cov, trials)
	}
	if c := extrapolate(pop, n, "test"); c.Low != int64(total) || c.High != int64(total) || c.Confidence != 1 {
		t.Errorf("every record counted: %+v, want exactly %v", c, total)
	}
}

func TestT99(t *testing.T) {
	// Two-sided 99% t quantiles from a t-table (NIST/SEMATECH e-Handbook 1.3.6.7.2).
	for df, want := range map[int]float64{9: 3.250, 29: 2.756, 99: 2.626, 399: 2.588} {
		if got := t99(df); math.Abs(got-want) > 0.002 {
			t.Errorf("t99(%d) = %.4f, want %.3f", df, got, want)
		}
	}
}

// countingProvider is a batch provider that counts tokens (as Anthropic's
// does): a record's length in bytes over 4, until busyAfter calls, then err.
type countingProvider struct {
	namedProvider
	calls     atomic.Int64
	busyAfter int64
	err       error
}

func (p *countingProvider) CountTokens(_ context.Context, _ string, in job.Input, _ job.Params) (int64, error) {
	if p.calls.Add(1) > p.busyAfter {
		return 0, p.err
	}
	return int64(len(in.Prompt)/4 + 1), nil
}

func (p *countingProvider) Abilities() service.Abilities {
	return service.Abilities{CountTokens: p.CountTokens}
}

// A dry run's count: the whole sample, or, when the provider throttles part
// way, an interval from the counts made so far if there are enough of them
// (it contains the true total and says so); any other failure, or too few
// counts, is an error (the estimate stands).
func TestCountInputThrottled(t *testing.T) {
	const n = 5000
	recs := make([]job.Input, n)
	var total int64
	for i := range recs {
		recs[i] = job.Input{ID: fmt.Sprintf("r%05d", i), Prompt: fmt.Sprintf("Summarise fact #%d:%s", i, strings.Repeat(" lorem ipsum dolor", (i*7919)%61))}
		total += int64(len(recs[i].Prompt)/4 + 1)
	}
	m, _ := model.Default().Lookup("claude-haiku-4-5")
	busy := errors.Join(service.ErrProviderBusy, errors.New("HTTP 429"))
	cases := []struct {
		name      string
		busyAfter int64
		err       error
		sampled   int // 0: an error
		short     bool
	}{
		{"all counted", 1 << 30, nil, CountSample, false},
		{"throttled after 120", 120, busy, 120, true},
		{"throttled after 10: too few", 10, busy, 0, false},
		{"another failure after 120", 120, errors.New("HTTP 400: bad record"), 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &countingProvider{namedProvider: namedProvider{name: "anthropic"}, busyAfter: tc.busyAfter, err: tc.err}
			s := &Service{Providers: service.NewRegistry(p)}
			c, err := s.countInput(context.Background(), SubmitRequest{Records: recs}, p, m)
			if tc.sampled == 0 {
				if err == nil || c != nil {
					t.Fatalf("count %+v, err %v: want an error", c, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Sampled != tc.sampled || (c.Partial != "") != tc.short || c.Low > total || total > c.High {
				t.Errorf("count %+v (true total %d): want %d sampled, short %v, the total inside", c, total, tc.sampled, tc.short)
			}
			if tc.short && !strings.Contains(c.Partial, "throttled counting after 120 of 400") {
				t.Errorf("short %q does not say how many were counted", c.Partial)
			}
		})
	}
}
