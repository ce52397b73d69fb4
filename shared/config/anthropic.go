package config

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment of the Anthropic provider and the reconciler.
const (
	// EnvAnthropicSecretARN names the Secrets Manager secret holding the Anthropic API key (deployed).
	EnvAnthropicSecretARN = "MCPBATCH_ANTHROPIC_SECRET_ARN"
	// EnvAnthropicAPIKey is the API key itself, for make dev only (the SDK's own variable).
	EnvAnthropicAPIKey = "ANTHROPIC_API_KEY"
	// EnvAnthropicBaseURL points the SDK elsewhere (a simulator); empty: api.anthropic.com.
	EnvAnthropicBaseURL = "MCPBATCH_ANTHROPIC_BASE_URL"
	// EnvAnthropicModels is the comma-separated list of allowed Anthropic models.
	EnvAnthropicModels = "MCPBATCH_ANTHROPIC_MODELS"
	// EnvBedrockQuota is the default per-model quota of submitted + in-progress Bedrock jobs.
	EnvBedrockQuota = "MCPBATCH_BEDROCK_QUOTA"
	// EnvBedrockQuotas overrides it per model: "model=n,model=n".
	EnvBedrockQuotas = "MCPBATCH_BEDROCK_QUOTAS"
	// EnvStaleMinutes is how long a Bedrock job may go without an event before the reconciler polls it.
	EnvStaleMinutes = "MCPBATCH_STALE_MINUTES"
)

// DefaultAnthropicModels are the Anthropic API models allowed by default.
var DefaultAnthropicModels = []string{"claude-haiku-4-5", "claude-sonnet-4-6"}

// Quotas parses "model=n,model=n"; a malformed entry is an error naming it.
func Quotas(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, item := range List(s) {
		model, n, ok := strings.Cut(item, "=")
		q, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || err != nil || q < 1 || strings.TrimSpace(model) == "" {
			return nil, fmt.Errorf("%s: %q is not model=quota with a quota of at least 1", EnvBedrockQuotas, item)
		}
		out[strings.TrimSpace(model)] = q
	}
	return out, nil
}

// Minutes reads a positive whole number of minutes from the environment.
func Minutes(name string) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s: %q is not a positive number of minutes", name, v)
	}
	return time.Duration(n) * time.Minute, nil
}
