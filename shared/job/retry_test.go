package job

import (
	"testing"
	"time"
)

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		code string
		want bool
	}{
		{"ThrottlingException", true}, {"429", true}, {"500", true}, {"503", true}, {"ModelTimeoutException", true},
		{"ServiceUnavailable", true}, {"ServiceUnavailableException", true}, {"InternalServerException", true},
		{"overloaded_error", true}, {"api_error", true}, {"rate_limit_error", true}, {`"429"`, true},
		{"400", false}, {"404", false}, {"ValidationException", false}, {"invalid_request_error", false},
		{"AccessDeniedException", false}, {"", false}, {"5000", false}, {"5xx", false}, {"InvokeFailed", false},
		{RecordBudgetHeld, true}, // never run: held at the job's budget
	} {
		if got := Retryable(tc.code); got != tc.want {
			t.Errorf("Retryable(%q) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

func TestRetryChildID(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	p := &Job{ID: NewID(now), CreatedAt: now, CompletedAt: now.Add(time.Hour)}
	a, b, c := RetryChildID(p, "sel-1"), RetryChildID(p, "sel-1"), RetryChildID(p, "sel-2")
	if !ValidID(a) || !ValidID(c) {
		t.Fatalf("child ids %q %q are not valid job ids", a, c)
	}
	if a != b || a == c {
		t.Fatalf("ids %q %q %q: want the same id for the same selection and another for another", a, b, c)
	}
	if other := RetryChildID(&Job{ID: NewID(now), CreatedAt: now, CompletedAt: now.Add(time.Hour)}, "sel-1"); other == a {
		t.Fatalf("two parents gave the same child id %q", a)
	}
	if a[:10] <= p.ID[:10] {
		t.Fatalf("child id %q sorts before its parent %q", a, p.ID)
	}
}
