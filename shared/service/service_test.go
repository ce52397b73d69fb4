package service

import (
	"slices"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

func TestSplitParts(t *testing.T) {
	tests := []struct {
		n, max int
		want   []int
	}{
		{100, 50_000, []int{100}},
		{50_000, 50_000, []int{50_000}},
		{50_001, 50_000, []int{25_001, 25_000}},
		{120_000, 50_000, []int{40_000, 40_000, 40_000}},
		{250, 100, []int{84, 83, 83}},
	}
	for _, tc := range tests {
		t.Run("", func(t *testing.T) {
			got := splitParts(tc.n, tc.max)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("splitParts(%d, %d) = %v, want %v", tc.n, tc.max, got, tc.want)
			}
			sum := 0
			for _, p := range got {
				sum += p
			}
			if sum != tc.n {
				t.Fatalf("parts sum to %d, want %d", sum, tc.n)
			}
		})
	}
}

func TestParseJobName(t *testing.T) {
	s := &Service{JobPrefix: "mcpbatch"}
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
			id, part, ok := s.ParseJobName(tc.name)
			if ok != tc.wantOK || id != tc.id || part != tc.part {
				t.Fatalf("ParseJobName(%q) = %q, %d, %v; want %q, %d, %v", tc.name, id, part, ok, tc.id, tc.part, tc.wantOK)
			}
		})
	}
}

func TestFinalOf(t *testing.T) {
	p := func(provider string, st job.Status) job.Part { return job.Part{ProviderStatus: provider, Status: st} }
	tests := []struct {
		name  string
		parts []job.Part
		want  job.Status
	}{
		{"completed", []job.Part{p(job.BedrockCompleted, job.StatusIngesting)}, job.StatusCompleted},
		{"partial", []job.Part{p(job.BedrockPartiallyCompleted, job.StatusIngesting)}, job.StatusPartiallyCompleted},
		{"one part failed", []job.Part{p(job.BedrockCompleted, job.StatusIngesting), p(job.BedrockFailed, job.StatusFailed)}, job.StatusPartiallyCompleted},
		{"stopped wins", []job.Part{p(job.BedrockCompleted, job.StatusIngesting), p(job.BedrockStopped, job.StatusIngesting)}, job.StatusCancelled},
		{"expired", []job.Part{p(job.BedrockExpired, job.StatusIngesting)}, job.StatusExpired},
		{"never submitted, cancelled", []job.Part{p("", job.StatusCancelled), p(job.BedrockCompleted, job.StatusIngesting)}, job.StatusCancelled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := finalOf(tc.parts); got != tc.want {
				t.Fatalf("finalOf = %s, want %s", got, tc.want)
			}
		})
	}
}
