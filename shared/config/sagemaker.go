package config

import (
	"fmt"
	"strconv"
	"strings"
)

// SageMaker settings the stack sets on every function.
const (
	// EnvSageMakerEndpoints is the comma list of endpoint names callers may invoke
	// (CDK context sagemakerEndpoints); empty allows none.
	EnvSageMakerEndpoints = "MCPBATCH_SAGEMAKER_ENDPOINTS"
	// EnvSageMakerMaxResponseBytes caps a real-time response (CDK context sagemakerMaxResponseBytes).
	EnvSageMakerMaxResponseBytes = "MCPBATCH_SAGEMAKER_MAX_RESPONSE_BYTES"
	// EnvSageMakerOperators is the comma list of owners (IAM principal ARNs, or API
	// key names in token mode) who may shift endpoint traffic (CDK context sagemakerOperators).
	EnvSageMakerOperators = "MCPBATCH_SAGEMAKER_OPERATORS"
	// EnvSageMakerInvocationTimeouts holds each deployed async endpoint's default
	// InvocationTimeoutSeconds ("name=seconds,..."), used when a call gives none.
	EnvSageMakerInvocationTimeouts = "MCPBATCH_SAGEMAKER_INVOCATION_TIMEOUTS"
	// EnvSageMakerDeadlineSeconds bounds one invoke_endpoint call, retries included.
	EnvSageMakerDeadlineSeconds = "MCPBATCH_SAGEMAKER_DEADLINE_SECONDS"
)

// Key prefixes of the data bucket for SageMaker async inference. An endpoint's
// AsyncInferenceConfig points its S3OutputPath and S3FailurePath at the last two.
const (
	SageMakerInputPrefix   = "sagemaker/input/"
	SageMakerOutputPrefix  = "sagemaker/output/"
	SageMakerFailurePrefix = "sagemaker/failure/"
)

// Defaults of the SageMaker settings.
const (
	DefaultSageMakerMaxResponseBytes = 1 << 20
	// DefaultSageMakerDeadlineSeconds lets a real-time call run as long as
	// SageMaker itself allows a model to answer InvokeEndpoint (60 s); the mcp
	// function's timeout leaves room for the retries' backoff on top.
	DefaultSageMakerDeadlineSeconds = 60
)

// EndpointSeconds parses "name=seconds,name=seconds" (EnvSageMakerInvocationTimeouts).
func EndpointSeconds(v string) (map[string]int, error) {
	out := map[string]int{}
	for _, item := range List(v) {
		name, n, ok := strings.Cut(item, "=")
		secs, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || err != nil || secs < 1 || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("%s: %q is not endpoint=seconds with at least 1 second", EnvSageMakerInvocationTimeouts, item)
		}
		out[strings.TrimSpace(name)] = secs
	}
	return out, nil
}
