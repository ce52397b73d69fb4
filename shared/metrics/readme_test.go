package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// emitted is what the emitter writes: metric name → its dimension sets,
// each a sorted, "/"-joined list of dimension names.
func emitted(t *testing.T, lines []byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(lines))
	for sc.Scan() {
		var doc struct {
			AWS struct {
				CloudWatchMetrics []struct {
					Dimensions [][]string
					Metrics    []struct{ Name string }
				}
			} `json:"_aws"`
		}
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		for _, d := range doc.AWS.CloudWatchMetrics {
			for _, m := range d.Metrics {
				for _, set := range d.Dimensions {
					set = slices.Sorted(slices.Values(set))
					key := strings.Join(set, "/")
					if !slices.Contains(out[m.Name], key) {
						out[m.Name] = append(out[m.Name], key)
					}
				}
			}
		}
	}
	return out
}

// documented reads README.md's list of metrics: groups separated by ";",
// each "`Name`, `Name` ... by Dim/Dim (and rolled up by Dim)".
func documented(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "`JobsFinished`")
	end := strings.Index(text[start:], ".")
	if start < 0 || end < 0 {
		t.Fatal("README.md: no metric list starting at `JobsFinished`")
	}
	list := strings.ReplaceAll(text[start:start+end], "\n", " ")
	name := regexp.MustCompile("`([A-Z][A-Za-z]+)`")
	dims := regexp.MustCompile(`by ([A-Z][a-z]+(?:/[A-Z][a-z]+)*)`)
	out := map[string][]string{}
	for _, group := range strings.Split(list, ";") {
		var sets []string
		for _, d := range dims.FindAllStringSubmatch(group, -1) {
			sets = append(sets, strings.Join(slices.Sorted(slices.Values(strings.Split(d[1], "/"))), "/"))
		}
		for _, n := range name.FindAllStringSubmatch(group, -1) {
			out[n[1]] = sets
		}
	}
	return out
}

// TestReadmeMetrics: the metrics README.md lists are the ones the emitter
// writes, each by exactly the dimension sets (roll-ups included) it says,
// and the reconciler recovery kinds it names are the reconciler's.
func TestReadmeMetrics(t *testing.T) {
	var buf bytes.Buffer
	e := &Emitter{W: &buf, Namespace: "mcpbatch/test", Now: fixed}
	emitAll(t, e)
	if err := e.OldestInFlight("bedrock", time.Hour); err != nil {
		t.Fatal(err)
	}
	got, want := emitted(t, buf.Bytes()), documented(t)
	if len(want) < 10 {
		t.Fatalf("README.md lists %d metrics: %v", len(want), want)
	}
	for name, sets := range want {
		slices.Sort(sets)
		g := slices.Sorted(slices.Values(got[name]))
		if !slices.Equal(g, sets) {
			t.Errorf("%s: README.md says by %v, emitted by %v", name, sets, g)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is emitted but README.md does not list it", name)
		}
	}

	b, _ := os.ReadFile("README.md")
	kinds := regexp.MustCompile("`ReconcilerRecoveries` by Kind\\s+\\(([^)]*)\\)").FindStringSubmatch(string(b))
	if kinds == nil {
		t.Fatal("README.md names no ReconcilerRecoveries kinds")
	}
	files, _ := filepath.Glob("../service/reconcile/*.go")
	var src strings.Builder
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			s, _ := os.ReadFile(f)
			src.Write(s)
		}
	}
	for _, k := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(kinds[1], -1) {
		if !strings.Contains(src.String(), `"`+k[1]+`"`) {
			t.Errorf("README.md: recovery kind %s: the reconciler has no such kind", k[1])
		}
	}
}
