package cost

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
)

// Usage is what a run used, in the units AWS bills.
type Usage struct {
	// Lambda is per function.
	Lambda map[string]LambdaUsage

	DynamoWRU, DynamoRRU float64
	// WRUByItemKind splits DynamoWRU by what was written ("record", "job", ...),
	// RRUByItemKind DynamoRRU by what was read ("" for reads not told apart).
	WRUByItemKind map[string]float64
	RRUByItemKind map[string]float64

	S3Puts, S3Gets         int64
	S3PutBytes, S3GetBytes int64
	// RecordPuts and RecordGets are the part of S3Puts and S3Gets that
	// wrote and read record pages (dynamostore's pages in object storage),
	// so that WithKind("record", …) prices another layout's records whole.
	RecordPuts, RecordGets int64

	Events      int64 // EventBridge custom events, in 64 KB chunks
	SNSPublish  int64 // in 64 KB chunks
	LogBytes    int64 // CloudWatch Logs ingestion
	MetricBytes int64 // EMF lines are log lines too: billed as Logs ingestion
}

// LambdaUsage is one function's invocations and billed duration.
type LambdaUsage struct {
	Requests  int64
	GBSeconds float64
}

// Meter collects Usage; it is safe for concurrent use.
type Meter struct {
	mu sync.Mutex
	u  Usage
}

// Invoke adds one invocation of fn that ran d with memoryMB configured
// (Lambda bills duration rounded up to the millisecond).
func (m *Meter) Invoke(fn string, memoryMB int, d time.Duration) {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.u.Lambda == nil {
		m.u.Lambda = map[string]LambdaUsage{}
	}
	l := m.u.Lambda[fn]
	l.Requests++
	l.GBSeconds += float64(ms) / 1000 * float64(memoryMB) / 1024
	m.u.Lambda[fn] = l
}

// Write adds the write of one item of size bytes (kind names it in the split)
// to the table and to indexes more of its projections (GSIs bill their own writes).
func (m *Meter) Write(kind string, size, indexes int) {
	w := WriteUnits(size) * float64(1+indexes)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.u.WRUByItemKind == nil {
		m.u.WRUByItemKind = map[string]float64{}
	}
	m.u.DynamoWRU += w
	m.u.WRUByItemKind[kind] += w
}

// Read adds a read of size bytes (one GetItem, or one Query page).
func (m *Meter) Read(size int, eventual bool) { m.ReadKind("", size, eventual) }

// ReadKind adds a read of size bytes of kind items (as in Write).
func (m *Meter) ReadKind(kind string, size int, eventual bool) {
	r := ReadUnits(size, eventual)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.u.RRUByItemKind == nil {
		m.u.RRUByItemKind = map[string]float64{}
	}
	m.u.DynamoRRU += r
	m.u.RRUByItemKind[kind] += r
}

// Put adds S3 PUT requests carrying bytes.
func (m *Meter) Put(requests, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.S3Puts += requests
	m.u.S3PutBytes += bytes
}

// RecordPut adds S3 PUT requests of record pages carrying bytes.
func (m *Meter) RecordPut(requests, bytes int64) {
	m.Put(requests, bytes)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.RecordPuts += requests
}

// RecordGet adds S3 GET requests of record pages returning bytes.
func (m *Meter) RecordGet(requests, bytes int64) {
	m.Get(requests, bytes)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.RecordGets += requests
}

// Get adds S3 GET requests returning bytes.
func (m *Meter) Get(requests, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.S3Gets += requests
	m.u.S3GetBytes += bytes
}

// Event adds one EventBridge event of size bytes.
func (m *Meter) Event(size int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.Events += Chunks(size)
}

// Publish adds one SNS publish of size bytes.
func (m *Meter) Publish(size int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.SNSPublish += Chunks(size)
}

// Log adds bytes of log lines (logs true) or EMF metric lines.
func (m *Meter) Log(bytes int, metric bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if metric {
		m.u.MetricBytes += int64(bytes)
	} else {
		m.u.LogBytes += int64(bytes)
	}
}

// Usage returns a copy of what was counted.
func (m *Meter) Usage() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.u
	u.Lambda = maps.Clone(m.u.Lambda)
	u.WRUByItemKind = maps.Clone(m.u.WRUByItemKind)
	u.RRUByItemKind = maps.Clone(m.u.RRUByItemKind)
	return u
}

// WithKind is u with the writes and reads of kind items replaced by alt's:
// the same run priced with another layout of those items.
func (u Usage) WithKind(kind string, alt Usage) Usage {
	s := u
	s.WRUByItemKind, s.RRUByItemKind = maps.Clone(u.WRUByItemKind), maps.Clone(u.RRUByItemKind)
	if s.WRUByItemKind == nil {
		s.WRUByItemKind = map[string]float64{}
	}
	if s.RRUByItemKind == nil {
		s.RRUByItemKind = map[string]float64{}
	}
	s.DynamoWRU += alt.WRUByItemKind[kind] - u.WRUByItemKind[kind]
	s.DynamoRRU += alt.RRUByItemKind[kind] - u.RRUByItemKind[kind]
	s.WRUByItemKind[kind], s.RRUByItemKind[kind] = alt.WRUByItemKind[kind], alt.RRUByItemKind[kind]
	if kind == "record" {
		s.S3Puts += alt.RecordPuts - u.RecordPuts
		s.S3Gets += alt.RecordGets - u.RecordGets
		s.RecordPuts, s.RecordGets = alt.RecordPuts, alt.RecordGets
	}
	return s
}

// Scale multiplies every count by f: a run of n records extrapolated to N is
// Scale(N/n). Linear on purpose: per-record work dominates, and the fixed
// part of a job (its own items, events, polls) is then overstated, never hidden.
func (u Usage) Scale(f float64) Usage {
	s := u
	s.Lambda = map[string]LambdaUsage{}
	for k, l := range u.Lambda {
		s.Lambda[k] = LambdaUsage{Requests: int64(float64(l.Requests)*f + 0.5), GBSeconds: l.GBSeconds * f}
	}
	s.WRUByItemKind, s.RRUByItemKind = map[string]float64{}, map[string]float64{}
	for k, w := range u.WRUByItemKind {
		s.WRUByItemKind[k] = w * f
	}
	for k, r := range u.RRUByItemKind {
		s.RRUByItemKind[k] = r * f
	}
	s.DynamoWRU, s.DynamoRRU = u.DynamoWRU*f, u.DynamoRRU*f
	sc := func(n int64) int64 { return int64(float64(n)*f + 0.5) }
	s.S3Puts, s.S3Gets, s.S3PutBytes, s.S3GetBytes = sc(u.S3Puts), sc(u.S3Gets), sc(u.S3PutBytes), sc(u.S3GetBytes)
	s.RecordPuts, s.RecordGets = sc(u.RecordPuts), sc(u.RecordGets)
	s.Events, s.SNSPublish, s.LogBytes, s.MetricBytes = sc(u.Events), sc(u.SNSPublish), sc(u.LogBytes), sc(u.MetricBytes)
	return s
}

// Line is one priced part of a bill.
type Line struct {
	Service, Item string
	Quantity      float64
	Unit          string
	USD           float64
}

// Bill prices u with p: one line per billed item, largest first. Storage is
// not in it: it depends on how long results are kept (ttl_days), not on the run.
func (u Usage) Bill(p Prices) []Line {
	var out []Line
	add := func(svc, item string, q float64, unit string, price float64) {
		if q > 0 {
			out = append(out, Line{svc, item, q, unit, q * price})
		}
	}
	for _, fn := range slices.Sorted(maps.Keys(u.Lambda)) {
		l := u.Lambda[fn]
		add("Lambda", fn+" requests", float64(l.Requests), "requests", p.LambdaPerRequest)
		add("Lambda", fn+" duration", l.GBSeconds, "GB-s", p.LambdaPerGBs)
	}
	for _, k := range slices.Sorted(maps.Keys(u.WRUByItemKind)) {
		add("DynamoDB", "writes: "+k+" items", u.WRUByItemKind[k], "WRU", p.DynamoPerWRU)
	}
	add("DynamoDB", "reads: record items", u.RRUByItemKind["record"], "RRU", p.DynamoPerRRU)
	add("DynamoDB", "reads: other", u.DynamoRRU-u.RRUByItemKind["record"], "RRU", p.DynamoPerRRU)
	add("S3", "PUT requests", float64(u.S3Puts), "requests", p.S3PerPut)
	add("S3", "GET requests", float64(u.S3Gets), "requests", p.S3PerGet)
	add("EventBridge", "custom events", float64(u.Events), "events", p.EventsPerEvent)
	add("SNS", "publishes", float64(u.SNSPublish), "publishes", p.SNSPerPublish)
	add("CloudWatch Logs", "log ingestion", float64(u.LogBytes)/1e9, "GB", p.LogsPerGB)
	add("CloudWatch Logs", "EMF metric lines", float64(u.MetricBytes)/1e9, "GB", p.LogsPerGB)
	slices.SortStableFunc(out, func(a, b Line) int {
		switch {
		case a.USD > b.USD:
			return -1
		case a.USD < b.USD:
			return 1
		}
		return 0
	})
	return out
}

// Total sums a bill.
func Total(lines []Line) float64 {
	t := 0.0
	for _, l := range lines {
		t += l.USD
	}
	return t
}

func (l Line) String() string {
	return fmt.Sprintf("%-16s %-34s %14.2f %-9s $%10.4f", l.Service, l.Item, l.Quantity, l.Unit, l.USD)
}
