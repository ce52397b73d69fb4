package job

import "time"

// Retention counts from the end of a job: a finished job and its records live
// TTLDays after CompletedAt. While a job is in flight its expiry is held at
// least InFlightHold ahead of every write that holds it (submit, each state
// change, each reconciler run), so a job that runs or queues longer than its
// TTL is never dropped while a provider still works (and bills) on it.
const (
	// BedrockDefaultTimeoutHrs is Bedrock's timeoutDurationInHours when none
	// is given (CreateModelInvocationJob API reference).
	BedrockDefaultTimeoutHrs = 72
	// AnthropicMaxRun: a Message Batch ends within 24 hours (it expires then).
	AnthropicMaxRun = 24 * time.Hour
	// OnDemandMaxRun bounds an on-demand run: at most 50,000 records at a
	// paced rate resumed from checkpoints; longer runs keep being held by
	// every checkpoint write.
	OnDemandMaxRun = 24 * time.Hour
	// HoldMargin covers queueing for provider room and the ingest after the
	// provider ends (a stuck ingest is failed after a bounded number of
	// retries, well within it).
	HoldMargin = 48 * time.Hour
)

// InFlightHold is how far ahead an in-flight job's expiry is held: the longest
// its provider may run it plus HoldMargin. Bedrock counts its maximum timeout
// (168 h), so the hold is right whatever timeout the deployment sets.
func InFlightHold(j *Job) time.Duration {
	switch {
	case j.Mode == ModeOnDemand:
		return OnDemandMaxRun + HoldMargin
	case j.Provider == ProviderAnthropic:
		return AnthropicMaxRun + HoldMargin
	case j.Provider == ProviderSageMaker:
		return SageMakerMaxRequestTTL*time.Second + HoldMargin
	}
	return MaxInFlightHold
}

// MaxInFlightHold is the longest InFlightHold of any job: Bedrock's, whose
// maximum timeout is the longest any provider runs a job.
const MaxInFlightHold = BedrockMaxTimeoutHrs*time.Hour + HoldMargin

// MaxLife is the longest a job item may live after its first object was
// written: held in flight at most MaxInFlightHold, then MaxTTLDays after it
// ended. Objects a finished job still reads are kept at least this long.
const MaxLife = MaxInFlightHold + MaxTTLDays*24*time.Hour

// Hold moves an in-flight job's expiry to now + InFlightHold + TTL when it
// would fall within InFlightHold of now; it reports whether it moved. A
// terminal job is left alone (see Retain).
func (j *Job) Hold(now time.Time) bool {
	if j.Status.Terminal() {
		return false
	}
	hold := InFlightHold(j)
	if !j.ExpiresAt.IsZero() && !j.ExpiresAt.Before(now.Add(hold)) {
		return false
	}
	j.ExpiresAt = ExpiresAt(now.Add(hold), j.TTLDays)
	return true
}

// Retain sets a finished job's expiry: TTLDays after it ended, or, for a job
// whose output was ingested, with its records (TTLDays after the ingest began,
// when the provider had ended), so neither outlives the other.
func (j *Job) Retain() {
	switch {
	case !j.RecordsExpireAt.IsZero():
		j.ExpiresAt = j.RecordsExpireAt
	case !j.CompletedAt.IsZero():
		j.ExpiresAt = ExpiresAt(j.CompletedAt, j.TTLDays)
	}
}

// RecordExpiresAt is the expiry of a record of j written at now outside a
// batch ingest (on-demand runs, SageMaker): TTL after the latest the job may
// still end (now + InFlightHold), so no record expires before its job does.
func RecordExpiresAt(j *Job, now time.Time) time.Time {
	if j.Status.Terminal() && !j.CompletedAt.IsZero() {
		return ExpiresAt(j.CompletedAt, j.TTLDays)
	}
	return ExpiresAt(now.Add(InFlightHold(j)), j.TTLDays)
}

// NewExpiresAt is the expiry of a job created at now.
func NewExpiresAt(j *Job, now time.Time) time.Time {
	return ExpiresAt(now.Add(InFlightHold(j)), j.TTLDays)
}
