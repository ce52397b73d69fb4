package index

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeLimits: the limits README.md states are the constants both
// adapters apply (the contract in indextest checks they are enforced).
func TestReadmeLimits(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	kb := func(n int) int { return n >> 10 }
	for _, c := range []struct {
		re   string
		want int
	}{
		{`dimension 1\.\.([0-9,]+) \(pgvector`, MaxDimension},
		{`\(pgvector: 1\.\.([0-9,]+), see Storage\)`, pgMaxHalfvecDims},
		{`≤ ([0-9]+) vectors / ≤ [0-9]+ MiB per write`, MaxVectorsPerPut},
		{`≤ [0-9]+ vectors / ≤ ([0-9]+) MiB per write`, MaxRequestBytes >> 20},
		{`metadata ≤ ([0-9]+) KB per vector`, kb(MaxMetadataBytes)},
		{`of which ≤ ([0-9]+) KB filterable`, kb(MaxFilterableBytes)},
		{`≤ ([0-9]+) keys, ≤ [0-9]+ non-filterable keys per index`, MaxMetadataKeys},
		{`≤ ([0-9]+) non-filterable keys per index`, MaxNonFilterableKeys},
		{`k ≤ ([0-9]+)\.`, MaxTopK},
		{"`MaxIndexesPerOwner` \\(([0-9]+)\\)", MaxIndexesPerOwner},
		{"`Info.CompletedJobs` holds the last ([0-9]+) committed job ids", MaxCompletedJobs},
		{"HNSW index takes `vector` up to ([0-9,]+) dimensions", pgMaxVectorDims},
		{"`PGVector.EfSearch` \\(default ([0-9]+)\\)", NewPGVector(nil).EfSearch},
	} {
		m := regexp.MustCompile(c.re).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("no README text matches %s", c.re)
			continue
		}
		if got := strings.ReplaceAll(m[1], ",", ""); got != strconv.Itoa(c.want) {
			t.Errorf("%s: README.md says %s, the code %d", c.re, m[1], c.want)
		}
	}
	if m := regexp.MustCompile("named `index.PhysicalName\\(ref\\)` \\(`(mb-)` \\+ ([0-9]+) hex digits").FindStringSubmatch(text); m == nil ||
		!regexp.MustCompile(`^`+m[1]+`[0-9a-f]{`+m[2]+`}$`).MatchString(PhysicalName(Ref{Owner: "o", Name: "n"})) {
		t.Errorf("PhysicalName %q is not what README.md says (%v)", PhysicalName(Ref{Owner: "o", Name: "n"}), m)
	}
}
