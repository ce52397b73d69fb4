// Package metrics writes CloudWatch Embedded Metric Format (EMF) lines: one JSON
// object per line on the function's log stream, from which CloudWatch Logs
// extracts the metrics. No metrics client, no PutMetricData call, no extra
// latency: a Lambda's stdout is already shipped to CloudWatch Logs.
//
// The document shape follows the EMF specification
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html,
// checked 2026-11-30):
//
//	{"_aws":{"Timestamp":<ms since epoch>,"CloudWatchMetrics":[{"Namespace":"...",
//	  "Dimensions":[["Provider","Status"]],"Metrics":[{"Name":"JobsFinished","Unit":"Count"}]}]},
//	 "Provider":"bedrock","Status":"completed","JobsFinished":1}
//
// Limits enforced here, as the specification and CloudWatch state them: at most
// 100 metrics in one directive, at most 30 dimensions in one dimension set,
// names of 1..255 characters, dimension values of 1..1,024 ASCII characters,
// units from CloudWatch's list, finite values.
package metrics

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/jsonl"
)

// Unit is a CloudWatch metric unit.
type Unit string

// The CloudWatch units (API_MetricDatum's StandardUnit).
const (
	Seconds        Unit = "Seconds"
	Microseconds   Unit = "Microseconds"
	Milliseconds   Unit = "Milliseconds"
	Bytes          Unit = "Bytes"
	Kilobytes      Unit = "Kilobytes"
	Megabytes      Unit = "Megabytes"
	Gigabytes      Unit = "Gigabytes"
	Terabytes      Unit = "Terabytes"
	Bits           Unit = "Bits"
	Kilobits       Unit = "Kilobits"
	Megabits       Unit = "Megabits"
	Gigabits       Unit = "Gigabits"
	Terabits       Unit = "Terabits"
	Percent        Unit = "Percent"
	Count          Unit = "Count"
	BytesPerSecond Unit = "Bytes/Second"
	KBPerSecond    Unit = "Kilobytes/Second"
	MBPerSecond    Unit = "Megabytes/Second"
	GBPerSecond    Unit = "Gigabytes/Second"
	TBPerSecond    Unit = "Terabytes/Second"
	BitsPerSecond  Unit = "Bits/Second"
	KbPerSecond    Unit = "Kilobits/Second"
	MbPerSecond    Unit = "Megabits/Second"
	GbPerSecond    Unit = "Gigabits/Second"
	TbPerSecond    Unit = "Terabits/Second"
	CountPerSecond Unit = "Count/Second"
	None           Unit = "None"
)

var units = map[Unit]bool{
	Seconds: true, Microseconds: true, Milliseconds: true, Bytes: true, Kilobytes: true, Megabytes: true,
	Gigabytes: true, Terabytes: true, Bits: true, Kilobits: true, Megabits: true, Gigabits: true, Terabits: true,
	Percent: true, Count: true, BytesPerSecond: true, KBPerSecond: true, MBPerSecond: true, GBPerSecond: true,
	TBPerSecond: true, BitsPerSecond: true, KbPerSecond: true, MbPerSecond: true, GbPerSecond: true,
	TbPerSecond: true, CountPerSecond: true, None: true,
}

// Limits of one EMF directive.
const (
	MaxMetrics       = 100
	MaxDimensions    = 30
	MaxNameLen       = 255
	MaxDimValueLen   = 1024
	DefaultNamespace = "mcpbatch"
)

// Metric is one value of one metric.
type Metric struct {
	Name  string
	Unit  Unit
	Value float64
}

// Emitter writes EMF lines to W. It is safe for concurrent use: each line is
// built in a reused buffer and written with one Write call.
type Emitter struct {
	W         io.Writer
	Namespace string
	Now       func() time.Time

	mu  sync.Mutex
	buf []byte
}

// Emit writes one EMF line: every metric under the one dimension set made of
// dims' keys (sorted). An invalid call writes nothing and returns an error
// naming the field and the limit; a nil Emitter or nil W emits nothing.
func (e *Emitter) Emit(dims map[string]string, metrics ...Metric) error {
	return e.emit(dims, nil, metrics)
}

// EmitRollup is Emit with a second dimension set, rollup (a subset of dims'
// keys), in the same line: CloudWatch then also aggregates the metrics over
// the keys left out, which is what an alarm over every model needs, for the
// cost of one line.
func (e *Emitter) EmitRollup(dims map[string]string, rollup []string, metrics ...Metric) error {
	for _, k := range rollup {
		if _, ok := dims[k]; !ok {
			return fmt.Errorf("metrics: roll-up dimension %q is not one of the line's dimensions", k)
		}
	}
	return e.emit(dims, rollup, metrics)
}

func (e *Emitter) emit(dims map[string]string, rollup []string, metrics []Metric) error {
	if e == nil || e.W == nil || len(metrics) == 0 {
		return nil
	}
	if err := check(dims, metrics); err != nil {
		return err
	}
	var keyArr [MaxDimensions]string
	keys := keyArr[:0]
	for k := range dims {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	ns := e.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	if len(ns) > MaxNameLen || (len(ns) >= 4 && ns[:4] == "AWS/") {
		return fmt.Errorf("metrics: namespace %q: must be 1..%d characters and not start with AWS/", ns, MaxNameLen)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.buf[:0]
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, now().UnixMilli(), 10)
	b = append(b, `,"CloudWatchMetrics":[{"Namespace":`...)
	b = jsonl.AppendString(b, ns)
	b = append(b, `,"Dimensions":[[`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonl.AppendString(b, k)
	}
	if rollup != nil {
		b = append(b, `],[`...)
		for i, k := range rollup {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonl.AppendString(b, k)
		}
	}
	b = append(b, `]],"Metrics":[`...)
	for i, m := range metrics {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Name":`...)
		b = jsonl.AppendString(b, m.Name)
		if m.Unit != "" {
			b = append(b, `,"Unit":`...)
			b = jsonl.AppendString(b, string(m.Unit))
		}
		b = append(b, '}')
	}
	b = append(b, `]}]}`...)
	for _, k := range keys {
		b = append(b, ',')
		b = jsonl.AppendString(b, k)
		b = append(b, ':')
		b = jsonl.AppendString(b, dims[k])
	}
	for _, m := range metrics {
		b = append(b, ',')
		b = jsonl.AppendString(b, m.Name)
		b = append(b, ':')
		b = strconv.AppendFloat(b, m.Value, 'g', -1, 64)
	}
	b = append(b, '}', '\n')
	e.buf = b
	_, err := e.W.Write(b)
	return err
}

func check(dims map[string]string, metrics []Metric) error {
	if len(metrics) > MaxMetrics {
		return fmt.Errorf("metrics: %d metrics in one line; EMF allows at most %d per directive", len(metrics), MaxMetrics)
	}
	if len(dims) > MaxDimensions {
		return fmt.Errorf("metrics: dimensions: %d keys; EMF allows at most %d per dimension set", len(dims), MaxDimensions)
	}
	for k, v := range dims {
		if err := checkName("dimension name", k); err != nil {
			return err
		}
		if len(v) == 0 || len(v) > MaxDimValueLen || !printableASCII(v) {
			return fmt.Errorf("metrics: dimension %q: value must be 1..%d printable ASCII characters", k, MaxDimValueLen)
		}
	}
	for i, m := range metrics {
		if err := checkName("metric name", m.Name); err != nil {
			return err
		}
		if _, clash := dims[m.Name]; clash {
			return fmt.Errorf("metrics: metric %q has the name of a dimension; the two would share one member", m.Name)
		}
		for _, o := range metrics[:i] {
			if o.Name == m.Name {
				return fmt.Errorf("metrics: metric %q appears twice in one line", m.Name)
			}
		}
		if m.Unit != "" && !units[m.Unit] {
			return fmt.Errorf("metrics: metric %q: unit %q is not a CloudWatch unit", m.Name, m.Unit)
		}
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			return fmt.Errorf("metrics: metric %q: value %v is not a finite number", m.Name, m.Value)
		}
	}
	return nil
}

func checkName(what, s string) error {
	if len(s) == 0 || len(s) > MaxNameLen || !printableASCII(s) || s[0] == ':' || s == "_aws" {
		return fmt.Errorf("metrics: %s %q: must be 1..%d printable ASCII characters, not start with ':' and not be _aws", what, s, MaxNameLen)
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
