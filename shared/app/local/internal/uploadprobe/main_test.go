package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out strings.Builder
	if err := run(2, 1100, "", &out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"records=1906 ", "status=validating provider_status=Submitted parts=1 ", "submit_answer=", "peak_rss_mib=", "peak_heap_mib="} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q: %s", w, out.String())
		}
	}
}

// TestHeapDoesNotFollowTheFile submits a 5 MiB and a 40 MiB file end to end:
// both answer validating and end with their provider job submitted and every record, and the Go
// heap's peak during validation grows far less than the file (what it keeps
// is 24 bytes a record, not the records). Holding the file, or its lines, in
// memory would grow the peak by at least the 35 MiB between the two. The gap
// is that wide because the peak of one run swings by up to ~9 MiB with GC
// timing (GOGC=100 lets garbage reach what is live): with 5 and 20 MiB the
// bound (a third of 15 MiB) sat inside that noise.
func TestHeapDoesNotFollowTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 25 MiB")
	}
	small, err := probe(5<<20, 1100, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	big, err := probe(40<<20, 1100, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Result{small, big} {
		if r.Status != "validating" || r.ProviderStatus != "Submitted" || r.Parts == 0 || r.Records != r.Bytes/1100 {
			t.Errorf("%d bytes: status %s (provider %s, %d parts), %d records", r.Bytes, r.Status, r.ProviderStatus, r.Parts, r.Records)
		}
	}
	fileGrowth := big.Bytes - small.Bytes
	// The live heap, not the heap in use: the latter carries whatever garbage
	// the last collection left, which swung 21-31 MiB between runs of one size.
	heapGrowth := int64(big.PeakLive) - int64(small.PeakLive)
	t.Logf("5 MiB: peak live heap %.1f MiB (in use %.1f); 40 MiB: %.1f MiB (in use %.1f) (records %d -> %d)",
		float64(small.PeakLive)/(1<<20), float64(small.PeakHeap)/(1<<20), float64(big.PeakLive)/(1<<20), float64(big.PeakHeap)/(1<<20), small.Records, big.Records)
	if heapGrowth > fileGrowth/3 {
		t.Errorf("peak live heap grew by %d bytes for %d more bytes of file: memory follows the file", heapGrowth, fileGrowth)
	}
}
