package job_test

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// TestMaxInFlightHold: no job is held in flight longer than MaxInFlightHold,
// the bound the bucket's lifecycle keeps a job's files by (infra/data.go).
func TestMaxInFlightHold(t *testing.T) {
	for _, j := range []job.Job{
		{Provider: job.ProviderBedrock, Mode: job.ModeBatch},
		{Provider: job.ProviderBedrock, Mode: job.ModeOnDemand},
		{Provider: job.ProviderAnthropic, Mode: job.ModeBatch},
		{Provider: job.ProviderAnthropic, Mode: job.ModeOnDemand},
		{Provider: job.ProviderSageMaker},
	} {
		if h := job.InFlightHold(&j); h > job.MaxInFlightHold {
			t.Errorf("%s %s: held %s, over MaxInFlightHold %s", j.Provider, j.Mode, h, job.MaxInFlightHold)
		}
	}
}
