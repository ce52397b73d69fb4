package bedrock_test

import (
	"strings"
	"testing"
)

// TestBatchRefusedWithoutBatchQuotas: a model of the account that has no
// batch quotas takes no batch job; one with them does.
func TestBatchRefusedWithoutBatchQuotas(t *testing.T) {
	e := newEnv(t, nil)
	e.put(t, inputURI, claudeLines(100))
	_, err := e.create(t, "no-batch", "no-batch", "mistral.mistral-7b-instruct-v0:2")
	if err == nil || !strings.Contains(err.Error(), "ValidationException") || !strings.Contains(err.Error(), "mistral.mistral-7b-instruct-v0:2") {
		t.Fatalf("create for a model without batch quotas: %v, want a ValidationException naming it", err)
	}
	if _, err := e.create(t, "batch", "batch", "openai.gpt-oss-120b-1:0"); err != nil {
		t.Fatalf("create for a model with batch quotas: %v", err)
	}
}
