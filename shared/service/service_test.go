package service

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

// TestSplit: parts are balanced by count, as few as the limits allow, never
// over the record or byte limit, and not under the minimum when neighbours can
// spare records.
func TestSplit(t *testing.T) {
	same := func(n, size int) []int { return slices.Repeat([]int{size}, n) }
	bedrock := BatchLimits{MinRecords: 100, MaxRecordsPerPart: 50_000, MaxBytesPerPart: 1 << 30}
	tests := []struct {
		name  string
		sizes []int
		lim   BatchLimits
		want  []int
	}{
		{"one part", same(100, 10), bedrock, []int{100}},
		{"exactly the maximum", same(50_000, 10), bedrock, []int{50_000}},
		{"one over: balanced halves", same(50_001, 10), bedrock, []int{25_001, 25_000}},
		{"three balanced parts", same(120_000, 10), bedrock, []int{40_000, 40_000, 40_000}},
		{"remainder to the first parts", same(250, 10), BatchLimits{MaxRecordsPerPart: 100}, []int{84, 83, 83}},
		// 10 records of 9+1 bytes, 35 bytes a part: 3 a part by bytes, so 4 parts, balanced.
		{"byte limited", same(10, 9), BatchLimits{MaxRecordsPerPart: 100, MaxBytesPerPart: 35}, []int{3, 3, 2, 2}},
		// The envelope counts: 5 + 3×10 = 35 fits, a fourth record does not.
		{"envelope counts", same(6, 9), BatchLimits{MaxRecordsPerPart: 100, MaxBytesPerPart: 35, EnvelopeBytes: 5}, []int{3, 3}},
		// The two big records cannot share a part: three parts, balanced.
		{"big records apart", []int{1, 1, 1, 40, 40, 1, 1, 1, 1, 1}, BatchLimits{MinRecords: 2, MaxRecordsPerPart: 10, MaxBytesPerPart: 50}, []int{4, 3, 3}},
		// Filling by bytes leaves [4 2 4]: the middle part borrows a record from
		// the first so none is under the minimum of 3.
		{"minimum restored", []int{1, 30, 1, 1, 1, 40, 30, 1, 1, 1}, BatchLimits{MinRecords: 3, MaxRecordsPerPart: 10, MaxBytesPerPart: 50}, []int{3, 3, 4}},
		// [40 1] and [30 …] cannot meet: the part under the minimum cannot be avoided.
		{"minimum unavoidable", []int{40, 1, 30, 1, 1, 1, 1, 1}, BatchLimits{MinRecords: 3, MaxRecordsPerPart: 10, MaxBytesPerPart: 50}, []int{2, 6}},
		{"byte and count limits together", same(12, 9), BatchLimits{MaxRecordsPerPart: 2, MaxBytesPerPart: 25}, []int{2, 2, 2, 2, 2, 2}},
		{"no byte limit", same(7, 1000), BatchLimits{MaxRecordsPerPart: 3}, []int{3, 2, 2}},
		{"Anthropic-like greedy case is balanced", same(100_001, 1), BatchLimits{MinRecords: 1, MaxRecordsPerPart: 100_000, MaxBytesPerPart: 256 << 20, EnvelopeBytes: 15}, []int{50_001, 50_000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.sizes, tc.lim)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Split = %v, want %v", got, tc.want)
			}
			start := 0
			for i, c := range got {
				bytes := tc.lim.EnvelopeBytes
				for _, sz := range tc.sizes[start : start+c] {
					bytes += int64(sz) + 1
				}
				if c > tc.lim.MaxRecordsPerPart || (tc.lim.MaxBytesPerPart > 0 && bytes > tc.lim.MaxBytesPerPart) {
					t.Fatalf("part %d: %d records, %d bytes over the limits %+v", i, c, bytes, tc.lim)
				}
				start += c
			}
			if start != len(tc.sizes) {
				t.Fatalf("parts hold %d records, want %d", start, len(tc.sizes))
			}
		})
	}
}

func TestSplitRecordTooBig(t *testing.T) {
	_, err := Split([]int{10, 60, 10}, BatchLimits{MaxRecordsPerPart: 10, MaxBytesPerPart: 50})
	var fe *job.FieldError
	if !errors.As(err, &fe) || fe.Field != "records[1]" || !strings.Contains(fe.Reason, "50 bytes") {
		t.Fatalf("got %v, want a field error on records[1] naming the 50-byte limit", err)
	}
}

func TestParseJobName(t *testing.T) {
	const prefix = "mcpbatch"
	const id = "01jdz3k6r8x9y2w4v5t7q0m1n3"
	tests := []struct {
		name   string
		id     string
		part   int
		wantOK bool
	}{
		{"mcpbatch-" + id, id, 0, true},
		{"mcpbatch-" + id + "-p3", id, 2, true},
		{"other-" + id, "", 0, false},
		{"mcpbatch-" + id + "-p0", "", 0, false},
		{"mcpbatch-" + id + "-px", "", 0, false},
		{"mcpbatch-not-a-job-id", "", 0, false},
		{"mcpbatchx-" + id, "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, part, ok := ParseJobName(prefix, tc.name)
			if ok != tc.wantOK || id != tc.id || part != tc.part {
				t.Fatalf("ParseJobName(%q) = %q, %d, %v; want %q, %d, %v", tc.name, id, part, ok, tc.id, tc.part, tc.wantOK)
			}
		})
	}
}

// bedrockWords is a provider test double that answers with Bedrock's status
// vocabulary, to test how the service folds parts into a final status.
type bedrockWords struct{ missingProvider }

func (bedrockWords) Final(p job.Part) job.Status { return bedrock.Final(p.ProviderStatus) }

func TestFinalOf(t *testing.T) {
	p := func(provider string, st job.Status) job.Part { return job.Part{ProviderStatus: provider, Status: st} }
	tests := []struct {
		name  string
		parts []job.Part
		want  job.Status
	}{
		{"completed", []job.Part{p(bedrock.StatusCompleted, job.StatusIngesting)}, job.StatusCompleted},
		{"partial", []job.Part{p(bedrock.StatusPartiallyCompleted, job.StatusIngesting)}, job.StatusPartiallyCompleted},
		{"one part failed", []job.Part{p(bedrock.StatusCompleted, job.StatusIngesting), p(bedrock.StatusFailed, job.StatusFailed)}, job.StatusPartiallyCompleted},
		{"stopped wins", []job.Part{p(bedrock.StatusCompleted, job.StatusIngesting), p(bedrock.StatusStopped, job.StatusIngesting)}, job.StatusCancelled},
		{"expired", []job.Part{p(bedrock.StatusExpired, job.StatusIngesting)}, job.StatusExpired},
		{"never submitted, cancelled", []job.Part{p("", job.StatusCancelled), p(bedrock.StatusCompleted, job.StatusIngesting)}, job.StatusCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := finalOf(bedrockWords{}, tc.parts); got != tc.want {
				t.Fatalf("finalOf = %s, want %s", got, tc.want)
			}
		})
	}
}
