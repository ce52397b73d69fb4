package batch

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

func usd(v float64) *float64 { return &v }

// Parts as decideBudget sees them; each has an estimate of $1.
var (
	queued   = job.Part{Status: job.StatusQueued, EstimateUSD: 1}
	leased   = job.Part{Status: job.StatusQueued, EstimateUSD: 1, SubmitLease: "run"}
	running  = job.Part{Status: job.StatusInProgress, EstimateUSD: 1, Ref: "arn"}
	ended    = job.Part{Status: job.StatusIngesting, EstimateUSD: 1, Ref: "arn"}
	held     = job.Part{Status: job.StatusQueued, EstimateUSD: 1, Held: true, ProviderStatus: HeldForBudget}
	refused  = job.Part{Status: job.StatusFailed, EstimateUSD: 1, ProviderStatus: "SubmitFailed"}
	released = job.Part{Status: job.StatusQueued, EstimateUSD: 1, ProviderStatus: WaitingForQuota} // tried, found the quota full
)

func spent(p job.Part, v float64) job.Part { p.SpentUSD = usd(v); return p }

func TestDecideBudget(t *testing.T) {
	cases := []struct {
		name   string
		budget float64
		parts  []job.Part // the part decided is the last one
		want   budgetMove
	}{
		{"no budget", 0, []job.Part{spent(ended, 50), queued}, budgetGo},
		{"first part, within", 3, []job.Part{queued}, budgetGo},
		{"estimates add up to the budget exactly", 3, []job.Part{running, running, queued}, budgetGo},
		{"ended part cost less than estimated", 2, []job.Part{spent(ended, 0.4), spent(ended, 0.5), queued}, budgetGo},
		{"ended part without its totals counts its estimate", 2, []job.Part{ended, queued}, budgetGo},
		{"ended part cost more, nothing else runs", 3, []job.Part{spent(ended, 2.5), queued}, budgetStop},
		{"ended part cost more, another still runs", 4, []job.Part{spent(ended, 2.5), running, queued}, budgetHold},
		{"another part being submitted counts its estimate", 2.5, []job.Part{spent(ended, 1.2), leased, queued}, budgetHold},
		{"a part that only tried and was released counts nothing", 2.5, []job.Part{spent(ended, 1.2), released, queued}, budgetGo},
		{"held parts count nothing and do not keep it waiting", 2.5, []job.Part{spent(ended, 2), held, queued}, budgetStop},
		{"a part refused at submit counts nothing", 2, []job.Part{refused, spent(ended, 0.9), queued}, budgetGo},
		{"over by the parts' micro-dollar rounding only", 3, []job.Part{running, running, {Status: job.StatusQueued, EstimateUSD: 1 + 2e-6}}, budgetGo},
		{"over by more than rounding", 3, []job.Part{spent(ended, 1), spent(ended, 1), {Status: job.StatusQueued, EstimateUSD: 1 + 5e-6}}, budgetStop},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := &job.Job{BudgetUSD: c.budget, Parts: c.parts}
			if got := decideBudget(j, len(c.parts)-1); got != c.want {
				t.Errorf("decideBudget = %d, want %d (committed $%v)", got, c.want, committedUSD(j, len(c.parts)-1))
			}
		})
	}
}

// TestApplyBudget: what the claim's write does with each decision.
func TestApplyBudget(t *testing.T) {
	cases := []struct {
		name      string
		parts     []job.Part
		claim     bool
		err       error
		want      []string // provider statuses after
		wantHeld  []bool
		wantState []job.Status
	}{
		{"go: claimable, a former hold cleared", []job.Part{spent(ended, 0.5), held}, true, nil,
			[]string{"", HeldForBudget}, []bool{false, false}, []job.Status{job.StatusIngesting, job.StatusQueued}},
		{"hold: marked held with the amounts", []job.Part{spent(ended, 2), running, queued}, false, nil,
			[]string{"", "", HeldForBudget}, []bool{false, false, true}, []job.Status{job.StatusIngesting, job.StatusInProgress, job.StatusQueued}},
		{"hold again: no write", []job.Part{spent(ended, 2), running, held}, false, store.ErrNoChange,
			[]string{"", "", HeldForBudget}, []bool{false, false, true}, []job.Status{job.StatusIngesting, job.StatusInProgress, job.StatusQueued}},
		{"stop: every held part ends without a provider job", []job.Part{spent(ended, 2), held, queued}, false, nil,
			[]string{"", StoppedAtBudget, StoppedAtBudget}, []bool{false, true, true}, []job.Status{job.StatusIngesting, job.StatusIngesting, job.StatusIngesting}},
		{"stop: a held part that fits on its own stays queued", []job.Part{spent(ended, 1.8), held, {Status: job.StatusQueued, EstimateUSD: 0.5, Held: true, ProviderStatus: HeldForBudget}, queued}, false, nil,
			[]string{"", StoppedAtBudget, HeldForBudget, StoppedAtBudget}, []bool{false, true, true, true}, []job.Status{job.StatusIngesting, job.StatusIngesting, job.StatusQueued, job.StatusIngesting}},
		{"a cancelling part is not judged (only looked for)", []job.Part{spent(ended, 9), {Status: job.StatusCancelling, EstimateUSD: 1}}, true, nil,
			[]string{"", ""}, []bool{false, false}, []job.Status{job.StatusIngesting, job.StatusCancelling}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := &job.Job{BudgetUSD: 2.5, Parts: append([]job.Part(nil), c.parts...)}
			idx := len(j.Parts) - 1
			claim, err := applyBudget(j, idx)
			if claim != c.claim || !errors.Is(err, c.err) {
				t.Fatalf("applyBudget = %v, %v; want %v, %v", claim, err, c.claim, c.err)
			}
			for i, p := range j.Parts {
				if p.ProviderStatus != c.want[i] || p.Held != c.wantHeld[i] || p.Status != c.wantState[i] {
					t.Errorf("part %d = %s/%s held %v, want %s/%s held %v", i, p.Status, p.ProviderStatus, p.Held, c.wantState[i], c.want[i], c.wantHeld[i])
				}
			}
			if p := j.Parts[idx]; p.Held && !c.parts[idx].Held && !strings.Contains(p.Message, "budget_usd $2.5000") {
				t.Errorf("held part's message %q does not name the budget", p.Message)
			}
		})
	}
}

func TestBudgetStopMessage(t *testing.T) {
	j := &job.Job{BudgetUSD: 2, Cost: &job.Cost{TotalUSD: 2.25}, Parts: []job.Part{
		{Status: job.StatusCompleted, Ref: "arn", RecordCount: 100},
		{Status: job.StatusCompleted, Held: true, ProviderStatus: StoppedAtBudget, RecordCount: 100},
		{Status: job.StatusCompleted, Held: true, ProviderStatus: StoppedAtBudget, RecordCount: 80},
	}}
	want := "stopped at budget_usd: spent $2.2500 of budget $2.0000; 180 records in 2 held provider jobs were not run"
	if got := budgetStopMessage(j); !strings.HasPrefix(got, want) {
		t.Errorf("message %q, want it to start %q", got, want)
	}
	j.Parts = j.Parts[:1]
	if got := budgetStopMessage(j); got != "" {
		t.Errorf("no held part: message %q, want none", got)
	}
}
