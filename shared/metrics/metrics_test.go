package metrics

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var fixed = func() time.Time { return time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC) }

// emitAll writes the suite's metric lines for one sample of each event.
func emitAll(t *testing.T, e *Emitter) {
	t.Helper()
	for _, err := range []error{
		e.JobFinished(JobOutcome{Status: "partially_completed", Provider: "bedrock", Model: "anthropic.claude-3-5-haiku-20241022-v1:0",
			Succeeded: 90, Failed: 10, InputTokens: 12000, OutputTokens: 3400, CacheReadTokens: 3000, CacheWriteTokens: 1000,
			CostUSD: 0.0125, HasCost: true, QueueWait: 90 * time.Second, EndToEnd: 1500 * time.Millisecond * 100}),
		e.JobFinished(JobOutcome{Status: "failed", Provider: "anthropic", Model: "claude-haiku-4-5", Failed: 3}),
		e.Ingested("bedrock", 5000, 2*time.Second, 45*time.Second),
		e.Recovered("missed_event", 2),
		e.Throttled("bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0", 7),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestGolden(t *testing.T) {
	var buf bytes.Buffer
	emitAll(t, &Emitter{W: &buf, Namespace: "mcpbatch", Now: fixed})
	// A namespace that needs escaping.
	if err := (&Emitter{W: &buf, Namespace: "team \"a\"\\é", Now: fixed}).Emit(nil, Metric{Name: "X", Value: 1e21}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "emf.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("emitted lines differ from %s (go test -update to accept):\n%s", golden, buf.String())
	}
}

// validEMF checks one line against the EMF specification's required members.
func validEMF(line []byte) []string {
	var doc map[string]any
	if err := json.Unmarshal(line, &doc); err != nil {
		return []string{"not a JSON object: " + err.Error()}
	}
	var bad []string
	aws, ok := doc["_aws"].(map[string]any)
	if !ok {
		return []string{"no _aws object"}
	}
	if ts, ok := aws["Timestamp"].(float64); !ok || ts != math.Trunc(ts) || ts <= 0 {
		bad = append(bad, "_aws.Timestamp is not a positive integer of milliseconds")
	}
	dirs, ok := aws["CloudWatchMetrics"].([]any)
	if !ok || len(dirs) == 0 {
		return append(bad, "_aws.CloudWatchMetrics is not a non-empty array")
	}
	for _, d := range dirs {
		dir, _ := d.(map[string]any)
		if ns, ok := dir["Namespace"].(string); !ok || ns == "" {
			bad = append(bad, "directive without Namespace")
		}
		sets, ok := dir["Dimensions"].([]any)
		if !ok {
			bad = append(bad, "directive without Dimensions")
		}
		for _, s := range sets {
			keys, ok := s.([]any)
			if !ok || len(keys) > MaxDimensions {
				bad = append(bad, "dimension set is not an array of at most 30 keys")
			}
			for _, k := range keys {
				name, _ := k.(string)
				if _, ok := doc[name].(string); !ok {
					bad = append(bad, "dimension "+name+" has no string member on the root")
				}
			}
		}
		ms, ok := dir["Metrics"].([]any)
		if !ok || len(ms) == 0 || len(ms) > MaxMetrics {
			bad = append(bad, "Metrics is not an array of 1..100 definitions")
		}
		for _, m := range ms {
			def, _ := m.(map[string]any)
			name, _ := def["Name"].(string)
			if _, ok := doc[name].(float64); !ok {
				bad = append(bad, "metric "+name+" has no number member on the root")
			}
			if u, ok := def["Unit"]; ok && !units[Unit(u.(string))] {
				bad = append(bad, "metric "+name+" has unit "+u.(string))
			}
		}
	}
	return bad
}

func TestLinesAreValidEMF(t *testing.T) {
	var buf bytes.Buffer
	emitAll(t, &Emitter{W: &buf, Now: fixed})
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7 (two per job, one per other event)", len(lines))
	}
	for _, l := range lines {
		if bad := validEMF([]byte(l)); len(bad) > 0 {
			t.Errorf("%s\n%v", l, bad)
		}
	}
	// Control: the validator rejects documents that lack what it checks.
	for _, doc := range []string{
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[["A"]],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		`{"_aws":{"CloudWatchMetrics":[{"Namespace":"n","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":1}`,
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[[]],"Metrics":[{"Name":"M","Unit":"Parsecs"}]}]}}`,
	} {
		if bad := validEMF([]byte(doc)); len(bad) == 0 {
			t.Errorf("validator accepted %s", doc)
		}
	}
}

func TestEmitRefuses(t *testing.T) {
	many := func(n int) []Metric {
		ms := make([]Metric, n)
		for i := range ms {
			ms[i] = Metric{Name: "m" + strings.Repeat("x", i), Unit: Count, Value: 1}
		}
		return ms
	}
	manyDims := map[string]string{}
	for i := 0; i < 31; i++ {
		manyDims["d"+strings.Repeat("x", i)] = "v"
	}
	tests := []struct {
		name    string
		ns      string
		dims    map[string]string
		metrics []Metric
		want    string
	}{
		{"101 metrics", "", nil, many(101), "at most 100"},
		{"31 dimensions", "", manyDims, many(1), "at most 30"},
		{"unknown unit", "", nil, []Metric{{Name: "A", Unit: "Parsecs", Value: 1}}, "not a CloudWatch unit"},
		{"NaN", "", nil, []Metric{{Name: "A", Value: math.NaN()}}, "not a finite number"},
		{"Inf", "", nil, []Metric{{Name: "A", Value: math.Inf(1)}}, "not a finite number"},
		{"empty metric name", "", nil, []Metric{{Value: 1}}, "metric name"},
		{"duplicate metric", "", nil, []Metric{{Name: "A", Value: 1}, {Name: "A", Value: 2}}, "twice"},
		{"metric named like a dimension", "", map[string]string{"A": "x"}, []Metric{{Name: "A", Value: 1}}, "name of a dimension"},
		{"empty dimension value", "", map[string]string{"A": ""}, many(1), "1..1024"},
		{"non-ASCII dimension value", "", map[string]string{"A": "é"}, many(1), "printable ASCII"},
		{"dimension named _aws", "", map[string]string{"_aws": "x"}, many(1), "_aws"},
		{"AWS namespace", "AWS/Lambda", nil, many(1), "AWS/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := (&Emitter{W: &buf, Namespace: tc.ns, Now: fixed}).Emit(tc.dims, tc.metrics...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Fatalf("wrote %q on a refused call", buf.String())
			}
		})
	}
	// At the limits it writes.
	var buf bytes.Buffer
	delete(manyDims, "d")
	if err := (&Emitter{W: &buf}).Emit(manyDims, many(100)...); err != nil || len(validEMF(buf.Bytes())) > 0 {
		t.Fatalf("30 dimensions and 100 metrics: %v %v", err, validEMF(buf.Bytes()))
	}
}

func BenchmarkEmit(b *testing.B) {
	e := &Emitter{W: io.Discard, Now: fixed}
	dims := map[string]string{DimProvider: "bedrock", DimModel: "anthropic.claude-3-5-haiku-20241022-v1:0"}
	ms := []Metric{
		{Name: RecordsSucceeded, Unit: Count, Value: 90}, {Name: RecordsFailed, Unit: Count, Value: 10},
		{Name: InputTokens, Unit: Count, Value: 12000}, {Name: OutputTokens, Unit: Count, Value: 3400},
		{Name: CostUSD, Unit: None, Value: 0.0125}, {Name: EndToEndSeconds, Unit: Seconds, Value: 150},
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := e.Emit(dims, ms...); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJobFinished(b *testing.B) {
	e := &Emitter{W: io.Discard, Now: fixed}
	o := JobOutcome{Status: "completed", Provider: "bedrock", Model: "anthropic.claude-3-5-haiku-20241022-v1:0",
		Succeeded: 100, InputTokens: 12000, OutputTokens: 3400, CostUSD: 0.01, HasCost: true, EndToEnd: time.Minute}
	b.ReportAllocs()
	for b.Loop() {
		if err := e.JobFinished(o); err != nil {
			b.Fatal(err)
		}
	}
}

// Concurrent emits each land as one whole line.
func TestConcurrentEmitWholeLines(t *testing.T) {
	var buf bytes.Buffer
	e := &Emitter{W: &buf, Now: fixed}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if err := e.Throttled("bedrock", strings.Repeat("m", g+1), i); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines, want 400", len(lines))
	}
	for _, l := range lines {
		if bad := validEMF([]byte(l)); len(bad) > 0 {
			t.Fatalf("%s: %v", l, bad)
		}
	}
}

// A roll-up set must name dimensions of the line.
func TestEmitRollupUnknownDimension(t *testing.T) {
	var buf strings.Builder
	e := &Emitter{W: &buf, Now: fixed}
	err := e.EmitRollup(map[string]string{DimProvider: "bedrock"}, []string{DimModel}, Metric{Name: Throttles, Unit: Count, Value: 1})
	if err == nil || !strings.Contains(err.Error(), "Model") || buf.Len() != 0 {
		t.Fatalf("err %v, wrote %q: want an error naming Model and nothing written", err, buf.String())
	}
}
