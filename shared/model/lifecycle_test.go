package model

import (
	"strings"
	"testing"
	"time"
)

// The Bedrock lifecycle of the Claude 4 models on 2026-12-03, as the legacy
// lifecycle page gives it: Sonnet 4 past its end of life (2026-10-14),
// Opus 4.1 and Sonnet 4.5 legacy with their end of life ahead.
func TestBedrockClaude4Lifecycle(t *testing.T) {
	day := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		id, refused, warned string
	}{
		{"anthropic.claude-sonnet-4-20250514-v1:0", "reached its end of life on 2026-10-14 on Amazon Bedrock; use anthropic.claude-sonnet-4-6 instead", ""},
		{"anthropic.claude-opus-4-1-20250805-v1:0", "", "is legacy since 2026-07-08 and reaches its end of life on 2027-01-08; use anthropic.claude-opus-4-8 instead"},
		{"anthropic.claude-sonnet-4-5-20250929-v1:0", "", "is legacy since 2026-10-08 and reaches its end of life on 2027-04-08; use anthropic.claude-sonnet-4-6 instead"},
	} {
		m, ok := Default().Lookup(tc.id)
		if !ok {
			t.Fatalf("%s not in the catalog", tc.id)
		}
		w, err := m.Usable(day)
		switch {
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: %v, want refused: %q", tc.id, err, tc.refused)
		case tc.warned != "" && (err != nil || !strings.Contains(w, tc.warned)):
			t.Errorf("%s: warning %q, %v; want %q", tc.id, w, err, tc.warned)
		}
	}
}
