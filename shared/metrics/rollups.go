package metrics

import "time"

// OldestInFlightSeconds is the age (since submit) of the oldest job not yet
// terminal, by Provider, as the reconciler sees it on each pass: the "stuck
// jobs" alarm watches it.
const OldestInFlightSeconds = "OldestInFlightSeconds"

// OldestInFlight emits OldestInFlightSeconds for a provider (0 when none is in flight).
func (e *Emitter) OldestInFlight(provider string, age time.Duration) error {
	return e.Emit(map[string]string{DimProvider: provider}, Metric{Name: OldestInFlightSeconds, Unit: Seconds, Value: max(age, 0).Seconds()})
}
