package main

import (
	"math"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// longestJobLife is how long a job item may live after its first object is
// written: the longest its provider may hold it in flight (job.InFlightHold of
// every provider and mode) plus the longest TTL, which counts from its end,
// plus the day DynamoDB may take to delete an expired item.
func longestJobLife() time.Duration {
	var hold time.Duration
	for _, j := range []job.Job{
		{Provider: job.ProviderBedrock, Mode: job.ModeBatch},
		{Provider: job.ProviderBedrock, Mode: job.ModeOnDemand},
		{Provider: job.ProviderAnthropic, Mode: job.ModeBatch},
		{Provider: job.ProviderSageMaker},
	} {
		hold = max(hold, job.InFlightHold(&j))
	}
	return hold + time.Duration(job.MaxTTLDays+1)*24*time.Hour
}

// TestFilesOutliveTheirJobs: every object a live job still reads is kept as
// long as the job can live: the caller's records retry_failed resubmits
// (input/<job>/inputs.jsonl), the results stored apart from their record
// items (results/, on-demand records written while the job is held) and
// SageMaker's answers (sagemaker/output/). The raw files read only while a
// job is in flight (Bedrock's output, uploads, SageMaker's failures) need
// only outlive the longest hold.
func TestFilesOutliveTheirJobs(t *testing.T) {
	_, b := oneResource(t, fx.main.json, "AWS::S3::Bucket", "DataBucket")
	days := map[string]float64{}
	for _, r := range props(b)["LifecycleConfiguration"].(obj)["Rules"].([]interface{}) {
		m := r.(obj)
		if p, ok := m["Prefix"].(string); ok {
			days[p], _ = m["ExpirationInDays"].(float64)
		}
	}
	life := math.Ceil(longestJobLife().Hours() / 24)
	var hold time.Duration
	for _, p := range []string{job.ProviderBedrock, job.ProviderAnthropic, job.ProviderSageMaker} {
		hold = max(hold, job.InFlightHold(&job.Job{Provider: p}))
	}
	for _, c := range []struct {
		prefix  string
		atLeast float64
	}{
		{PrefixInput, life},
		{PrefixResults, life},
		{PrefixCache, life},
		{config.SageMakerOutputPrefix, life},
		{PrefixOutput, math.Ceil(hold.Hours() / 24)},
		{PrefixUploads, math.Ceil(hold.Hours() / 24)},
		{config.SageMakerFailurePrefix, math.Ceil(hold.Hours() / 24)},
	} {
		d, ok := days[c.prefix]
		if !ok {
			t.Errorf("%s: no expiry rule", c.prefix)
			continue
		}
		if d < c.atLeast {
			t.Errorf("%s expires after %v days, before the %v days a job reading it may live", c.prefix, d, c.atLeast)
		}
	}
}
