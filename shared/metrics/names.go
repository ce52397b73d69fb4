package metrics

import "time"

// The suite's metric names (namespace DefaultNamespace unless configured). The
// dashboard and alarms in the stack refer to these names and to the dimension
// names below.
const (
	JobsFinished           = "JobsFinished"           // Count, by Status, Provider, Model
	RecordsSucceeded       = "RecordsSucceeded"       // Count, by Provider, Model
	RecordsFailed          = "RecordsFailed"          // Count, by Provider, Model
	InputTokens            = "InputTokens"            // Count, by Provider, Model
	OutputTokens           = "OutputTokens"           // Count, by Provider, Model
	CostUSD                = "CostUSD"                // None (US dollars), by Provider, Model
	QueueWaitSeconds       = "QueueWaitSeconds"       // Seconds, submit -> provider started, by Provider, Model
	EndToEndSeconds        = "EndToEndSeconds"        // Seconds, submit -> terminal, by Provider, Model
	PromptCacheHitRatio    = "PromptCacheHitRatio"    // None (0..1), by Provider, Model
	EventLagSeconds        = "EventLagSeconds"        // Seconds, provider end -> ingested, by Provider
	IngestRecordsPerSecond = "IngestRecordsPerSecond" // Count/Second, by Provider
	ReconcilerRecoveries   = "ReconcilerRecoveries"   // Count, by Kind
	Throttles              = "Throttles"              // Count, by Provider, Model
)

// Dimension names.
const (
	DimStatus   = "Status"
	DimProvider = "Provider"
	DimModel    = "Model"
	DimKind     = "Kind"
)

var (
	rollupStatus   = []string{DimStatus}
	rollupProvider = []string{DimProvider}
)

// JobOutcome is what a job's terminal transition reports.
type JobOutcome struct {
	Status, Provider, Model string
	Succeeded, Failed       int
	InputTokens             int64
	OutputTokens            int64
	// CacheReadTokens and CacheWriteTokens feed PromptCacheHitRatio (left out
	// when the job read and wrote no tokens at all).
	CacheReadTokens, CacheWriteTokens int64
	// CostUSD is emitted when HasCost is set (a zero cost is a real figure).
	CostUSD float64
	HasCost bool
	// QueueWait (submit -> provider started) and EndToEnd (submit -> terminal)
	// are left out when zero.
	QueueWait, EndToEnd time.Duration
}

// JobFinished emits the terminal metrics of one job: JobsFinished by status,
// provider and model; the record, token, cost and latency figures by provider
// and model (two lines, one per dimension set).
func (e *Emitter) JobFinished(o JobOutcome) error {
	// Also by Status alone (the roll-up the failed-job rate alarm divides).
	if err := e.EmitRollup(map[string]string{DimStatus: o.Status, DimProvider: o.Provider, DimModel: o.Model}, rollupStatus,
		Metric{Name: JobsFinished, Unit: Count, Value: 1}); err != nil {
		return err
	}
	var arr [8]Metric
	ms := append(arr[:0],
		Metric{Name: RecordsSucceeded, Unit: Count, Value: float64(o.Succeeded)},
		Metric{Name: RecordsFailed, Unit: Count, Value: float64(o.Failed)},
		Metric{Name: InputTokens, Unit: Count, Value: float64(o.InputTokens)},
		Metric{Name: OutputTokens, Unit: Count, Value: float64(o.OutputTokens)},
	)
	if o.HasCost {
		ms = append(ms, Metric{Name: CostUSD, Unit: None, Value: o.CostUSD})
	}
	if o.QueueWait > 0 {
		ms = append(ms, Metric{Name: QueueWaitSeconds, Unit: Seconds, Value: o.QueueWait.Seconds()})
	}
	if o.EndToEnd > 0 {
		ms = append(ms, Metric{Name: EndToEndSeconds, Unit: Seconds, Value: o.EndToEnd.Seconds()})
	}
	// Input tokens exclude cached ones (Anthropic and Bedrock usage), so the
	// prompt is input + cache read + cache write.
	if prompt := o.InputTokens + o.CacheReadTokens + o.CacheWriteTokens; prompt > 0 && (o.CacheReadTokens > 0 || o.CacheWriteTokens > 0) {
		ms = append(ms, Metric{Name: PromptCacheHitRatio, Unit: None, Value: float64(o.CacheReadTokens) / float64(prompt)})
	}
	return e.Emit(map[string]string{DimProvider: o.Provider, DimModel: o.Model}, ms...)
}

// Ingested emits one ingest pass: EventLagSeconds (provider end -> ingested,
// left out when zero) and IngestRecordsPerSecond (left out when took is zero).
func (e *Emitter) Ingested(provider string, records int, took, lag time.Duration) error {
	var arr [2]Metric
	ms := arr[:0]
	if lag > 0 {
		ms = append(ms, Metric{Name: EventLagSeconds, Unit: Seconds, Value: lag.Seconds()})
	}
	if took > 0 {
		ms = append(ms, Metric{Name: IngestRecordsPerSecond, Unit: CountPerSecond, Value: float64(records) / took.Seconds()})
	}
	return e.Emit(map[string]string{DimProvider: provider}, ms...)
}

// Recovered emits ReconcilerRecoveries of one kind (e.g. "missed_event",
// "stuck_ingest").
func (e *Emitter) Recovered(kind string, n int) error {
	return e.Emit(map[string]string{DimKind: kind}, Metric{Name: ReconcilerRecoveries, Unit: Count, Value: float64(n)})
}

// Throttled emits Throttles seen calling a provider for a model.
func (e *Emitter) Throttled(provider, model string, n int) error {
	// Also by Provider alone (the throttles alarm's roll-up).
	return e.EmitRollup(map[string]string{DimProvider: provider, DimModel: model}, rollupProvider, Metric{Name: Throttles, Unit: Count, Value: float64(n)})
}
