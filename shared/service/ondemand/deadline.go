package ondemand

import (
	"fmt"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// leaveFlex moves a Flex run to the standard tier once Flex throttled it
// (throttled: in the chunk just checkpointed) and its deadline nears: the
// records left no longer fit before the deadline at the account's on-demand
// rate with the deadline margin (job.StopBatchBy's rule). Flex is the
// discounted tier that may throttle; standard is not deprioritised. It runs
// inside the checkpoint write, after the chunk's tokens are counted: those
// ran on Flex and stay priced there (job.TierSwitch).
func (s *Service) leaveFlex(j *job.Job, throttled bool, now time.Time) {
	o := j.OnDemand
	if !throttled || o.Params.Tier != model.TierFlex || j.Deadline.IsZero() || o.TierSwitch != nil {
		return
	}
	left := j.OnDemandRecords() - o.Line
	if left <= 0 {
		return
	}
	if now.Before(job.StopBatchBy(j.Deadline, job.OnDemandTime(left, j.DeadlineTokens, s.Models.RateOf(j.Model)))) {
		return
	}
	o.TierSwitch = &job.TierSwitch{From: o.Params.Tier, At: now, Line: o.Line, InputTokens: o.InputTokens, OutputTokens: o.OutputTokens,
		CacheReadTokens: o.CacheReadTokens, CacheWriteTokens: o.CacheWriteTokens}
	o.Params.Tier = ""
	j.AddWarning(fmt.Sprintf("the flex tier throttled the run as its deadline %s neared: the %d records left run on the standard tier from %s (the %d before are priced at flex)",
		j.Deadline.UTC().Format(time.RFC3339), left, now.UTC().Format(time.RFC3339), o.Line))
}
