package batch

import (
	"math/rand/v2"
	"testing"
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
