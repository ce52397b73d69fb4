package bedrock

import (
	"strings"
	"testing"
)

// TestTitanVectorStoredOnce: a Titan V2 response carries its vector twice
// (embedding and embeddingsByType.float); the stored output keeps one copy,
// read back as the same vector. A binary or differing embeddingsByType is kept.
func TestTitanVectorStoredOnce(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		keepByType   bool
	}{
		{"float twice", `{"embedding":[0.5,-0.25],"inputTextTokenCount":3,"embeddingsByType":{"float":[0.5, -0.25]}}`, false},
		{"binary too", `{"embedding":[0.5,-0.25],"inputTextTokenCount":3,"embeddingsByType":{"float":[0.5,-0.25],"binary":[1,0]}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := ParseOutputLine([]byte(`{"recordId":"r1","modelInput":{},"modelOutput":` + tc.output + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(rec.Output, "embeddingsByType"); got != tc.keepByType {
				t.Fatalf("stored %s: embeddingsByType kept %v, want %v", rec.Output, got, tc.keepByType)
			}
			if strings.Count(rec.Output, "0.5") != map[bool]int{false: 1, true: 2}[tc.keepByType] {
				t.Fatalf("stored %s", rec.Output)
			}
			v, err := Vector([]byte(rec.Output))
			if err != nil || len(v) != 2 || v[0] != 0.5 || v[1] != -0.25 || rec.InputTokens != 3 {
				t.Fatalf("vector %v tokens %d (%v) from %s", v, rec.InputTokens, err, rec.Output)
			}
		})
	}
}
