package bedrock

import (
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

func TestOutcomeCoversAllTen(t *testing.T) {
	all := []string{StatusSubmitted, StatusValidating, StatusScheduled, StatusInProgress, StatusCompleted,
		StatusPartiallyCompleted, StatusFailed, StatusStopping, StatusStopped, StatusExpired}
	for _, s := range all {
		t.Run(s, func(t *testing.T) {
			o, ok := Outcome(s)
			if !ok || !o.Status.Valid() {
				t.Fatalf("no outcome for %s", s)
			}
			if o.HasOutput && (o.Status != job.StatusIngesting || !o.Final.Terminal()) {
				t.Fatalf("%s has output but outcome %+v", s, o)
			}
			if o.Ended != (o.HasOutput || o.Status == job.StatusFailed) {
				t.Fatalf("%s: ended=%v inconsistent with %+v", s, o.Ended, o)
			}
		})
	}
	if _, ok := Outcome("Exploded"); ok {
		t.Fatal("unknown status mapped")
	}
}

func TestLater(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"", StatusSubmitted, true},
		{StatusValidating, StatusScheduled, true},
		{StatusScheduled, StatusValidating, false},
		{StatusScheduled, StatusScheduled, false},
		{StatusCompleted, StatusInProgress, false},
		{StatusInProgress, "Exploded", false},
	}
	for _, tc := range tests {
		t.Run(tc.a+"->"+tc.b, func(t *testing.T) {
			if got := Later(tc.a, tc.b); got != tc.want {
				t.Fatalf("Later = %v, want %v", got, tc.want)
			}
		})
	}
}
