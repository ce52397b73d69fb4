// Package config holds the names and defaults the stack and the functions share,
// so the CDK stack (which sets them) and the Lambdas (which read them) cannot drift.
package config

import (
	"fmt"
	"os"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

// Environment variable names set by the stack on every function.
const (
	EnvTable          = "MCPBATCH_TABLE"
	EnvBucket         = "MCPBATCH_BUCKET"
	EnvBus            = "MCPBATCH_BUS"
	EnvBedrockRoleARN = "MCPBATCH_BEDROCK_ROLE_ARN"
	EnvJobPrefix      = "MCPBATCH_JOB_PREFIX"
	EnvBedrockModels  = "MCPBATCH_BEDROCK_MODELS"
	EnvLogLevel       = "MCPBATCH_LOG_LEVEL"
	// EnvMetricsNamespace is the CloudWatch namespace of the EMF metrics (default mcpbatch).
	EnvMetricsNamespace = "MCPBATCH_METRICS_NAMESPACE"
	// EnvWebhookSecretARN names the Secrets Manager secret webhooks are signed with.
	EnvWebhookSecretARN = "MCPBATCH_WEBHOOK_SECRET_ARN"
)

// Event source and detail types on the project's own bus.
const (
	EventSource          = "mcpbatch"
	DetailJobOutputReady = "Job Output Ready"
	DetailJobCompleted   = "Job Completed"

	BedrockEventSource = "aws.bedrock"
	BedrockDetailType  = "Batch Inference Job State Change"
)

// EnvInputAllow lists s3:// prefixes an operator opens to every caller's
// input_uri, besides each caller's own folders (comma separated).
const EnvInputAllow = "MCPBATCH_INPUT_ALLOW"

// DefaultJobPrefix prefixes every Bedrock jobName this stack creates, so the
// default-bus rule matches only our jobs.
const DefaultJobPrefix = "mcpbatch"

// PrefixJobs is the data bucket's prefix for the documents of jobs too large
// for a DynamoDB item and the record pages cheaper kept as objects
// (dynamostore.WithOverflow); the stack grants it to every function that
// reads or writes jobs.
const PrefixJobs = "jobs/"

// PrefixCache is the data bucket's prefix of the result cache's index
// (submit reuse: true; shared/service/batch/reuse.go): one small object per
// record key, pointing at the job that answered it.
const PrefixCache = "cache/"

// DefaultBedrockBaseModels are the models allowed by default: current
// Claude Haiku and Sonnet, one model of each other text family (Nova, Llama)
// and Titan Text Embeddings V2. The model catalog (shared/model) holds their
// facts and lifecycle; on-demand calls pick the inference profile the
// catalog names for the region.
var DefaultBedrockBaseModels = []string{
	"anthropic.claude-haiku-4-5-20251001-v1:0",
	"anthropic.claude-sonnet-4-5-20250929-v1:0",
	"anthropic.claude-sonnet-4-6",
	"amazon.nova-lite-v1:0",
	"amazon.nova-2-lite-v1:0",
	"meta.llama3-3-70b-instruct-v1:0",
	"amazon.titan-embed-text-v2:0",
}

// DefaultBedrockModels are DefaultBedrockBaseModels with their us., eu. and
// global. inference profiles as the model catalog lists them: a caller may
// name the profile of the geography it works in (model.AllowGeographies).
var DefaultBedrockModels = model.Default().WithProfiles(DefaultBedrockBaseModels, nil)

// ProfileRegionPrefixes are the geography prefixes of cross-region inference profile ids.
var ProfileRegionPrefixes = []string{"us.", "eu.", "apac.", "global.", "jp.", "au.", "ca."}

// BaseModel strips an inference-profile geography prefix: "us.anthropic.x" -> "anthropic.x".
// The boolean says whether id was a profile.
func BaseModel(id string) (string, bool) {
	for _, p := range ProfileRegionPrefixes {
		if rest, ok := strings.CutPrefix(id, p); ok {
			return rest, true
		}
	}
	return id, false
}

// List parses a comma-separated list, dropping blanks.
func List(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Must reads a required environment variable.
func Must(name string) (string, error) {
	v := os.Getenv(name)
	if v == "" {
		return "", fmt.Errorf("environment variable %s is not set", name)
	}
	return v, nil
}

// Get reads an environment variable with a default.
func Get(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// EnvProvidersFunction names the providers function mcp invokes for the calls
// it does not link (Anthropic, the SageMaker control plane; package remote).
const EnvProvidersFunction = "MCPBATCH_PROVIDERS_FUNCTION"
