package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/app/routes"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// Context keys (cdk.json "context", or `cdk deploy -c key=value`).
const (
	CtxStackName     = "stackName"
	CtxJobPrefix     = "jobPrefix"
	CtxBedrockModels = "bedrockModels"
	CtxAssetDir      = "assetDir"
	CtxLogLevel      = "logLevel"
	CtxAuth          = "auth" // iam (default) | token: how MCP callers authenticate
	// CtxModels adds or overrides model catalog entries (shared/model): a JSON
	// document, as a string or inline in cdk.json; the functions get it as
	// MCPBATCH_MODELS_JSON and the IAM grants follow it.
	CtxModels = "models"
)

// Defaults for the context keys; cdk.json repeats them so they are visible to operators.
const (
	DefaultStackName = "mcpbatch"
	DefaultAssetDir  = "bin"
	DefaultLogLevel  = "info"
)

// Function names: the folder under functions/ and under the asset dir (bin/<fn>/bootstrap).
const (
	FnMCP           = "mcp"
	FnBedrockEvents = routes.FnBedrockEvents
	FnIngest        = routes.FnIngest
)

// FunctionNames lists every function whose bootstrap the stack packages.
var FunctionNames = []string{FnMCP, FnBedrockEvents, FnIngest, FnSageMakerEvents, FnNightlyReport, FnOnDemand, FnReconciler, FnValidate, FnProviders}

// featureFlags are the CDK feature flags the stack relies on. They live in code rather
// than only in cdk.json so tests (which never read cdk.json) synthesize what `cdk deploy` does.
var featureFlags = map[string]interface{}{
	// Access-log delivery through a bucket policy (logging.s3.amazonaws.com), not the legacy ACL.
	"@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": true,
	"@aws-cdk/aws-s3:createDefaultLoggingPolicy":      true,
	// Rule-target DLQ policies carry an aws:SourceArn condition for the one rule.
	"@aws-cdk/aws-events:eventsTargetQueueSameAccount": true,
}

// Settings are the knobs of one deployment, read from context.
type Settings struct {
	StackName string
	// JobPrefix starts every Bedrock jobName this stack creates ("<prefix>-<job id>"),
	// so the default-bus rule matches only this stack's jobs.
	JobPrefix string
	// BedrockModels are base model ids and inference-profile ids callers may use.
	BedrockModels []string
	// AssetDir holds <fn>/bootstrap for each function (`make build` output).
	AssetDir string
	LogLevel string

	// SageMakerEndpoints are the endpoint names callers may invoke (empty: none).
	SageMakerEndpoints []string
	// SageMakerMaxResponseBytes caps a real-time response (0: the default).
	SageMakerMaxResponseBytes int
	// SageMakerDeploy are the endpoints the stack creates (endpoints.go); their
	// names are in SageMakerEndpoints too. SageMakerOperators may shift traffic.
	SageMakerDeploy    []EndpointSpec
	SageMakerOperators []string
	// Auth is the MCP endpoint's auth mode: config.AuthIAM or config.AuthToken.
	Auth string
	// ModelsOverride is the catalog override from context (JSON, "" for none).
	ModelsOverride string
	// Catalog is the embedded model catalog with ModelsOverride applied.
	Catalog *model.Catalog

	// McpReservedConcurrency caps the mcp function in token mode (0: unset); see ops.go.
	McpReservedConcurrency int
	// AlarmEmail is subscribed to the alarm topic when set.
	AlarmEmail string
}

// jobPrefixPattern keeps "<prefix>-<26-char id>[-pN]" inside Bedrock's jobName pattern
// [a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9\+\-\.]){0,63} and its 63-character limit.
var jobPrefixPattern = regexp.MustCompile(`^[a-zA-Z0-9]+(-[a-zA-Z0-9]+)*$`)

const maxJobPrefixLen = 30

// modelIDPattern accepts Bedrock model and inference-profile ids (provider.name-version:n).
var modelIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9.\-]*\.[a-zA-Z0-9.\-_:]+$`)

// stackNamePattern is CloudFormation's stack name rule, kept short so derived names fit.
var stackNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,100}$`)

var logLevels = []string{"debug", "info", "warn", "error"}

// newApp builds the CDK app with the stack's feature flags; extra context (tests) wins over them.
func newApp(extra map[string]interface{}) awscdk.App {
	ctx := map[string]interface{}{}
	for k, v := range featureFlags {
		ctx[k] = v
	}
	for k, v := range extra {
		ctx[k] = v
	}
	return awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
}

// SettingsFromContext reads the context keys, falling back to the defaults in shared/config.
func SettingsFromContext(node constructs.Node) (Settings, error) {
	s := Settings{
		StackName:     DefaultStackName,
		JobPrefix:     config.DefaultJobPrefix,
		BedrockModels: append([]string(nil), config.DefaultBedrockModels...),
		AssetDir:      DefaultAssetDir,
		LogLevel:      DefaultLogLevel,
		Auth:          config.AuthIAM,

		McpReservedConcurrency: DefaultMcpReservedConcurrency,
	}
	var errs []error
	str := func(key string, dst *string) {
		v := node.TryGetContext(jsii.String(key))
		switch t := v.(type) {
		case nil:
		case string:
			if t = strings.TrimSpace(t); t != "" {
				*dst = t
			}
		default:
			errs = append(errs, fmt.Errorf("context %s: want a string, got %T", key, v))
		}
	}
	str(CtxStackName, &s.StackName)
	str(CtxJobPrefix, &s.JobPrefix)
	str(CtxAssetDir, &s.AssetDir)
	str(CtxLogLevel, &s.LogLevel)
	str(CtxAuth, &s.Auth)

	// bedrockModels is a comma list (-c bedrockModels=a,b); a JSON array in cdk.json works too.
	switch t := node.TryGetContext(jsii.String(CtxBedrockModels)).(type) {
	case nil:
	case string:
		if l := config.List(t); len(l) > 0 {
			s.BedrockModels = l
		}
	case []interface{}:
		var l []string
		for _, e := range t {
			es, ok := e.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("context %s: list element %v is not a string", CtxBedrockModels, e))
				continue
			}
			l = append(l, config.List(es)...)
		}
		if len(l) > 0 {
			s.BedrockModels = l
		}
	default:
		errs = append(errs, fmt.Errorf("context %s: want a comma list, got %T", CtxBedrockModels, t))
	}
	s.LogLevel = strings.ToLower(s.LogLevel)
	errs = append(errs, readSageMakerSettings(node, &s), readOpsSettings(node, &s), readModels(node, &s))
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	return s, s.Validate()
}

// Validate checks the settings without touching the file system.
func (s Settings) Validate() error {
	var errs []error
	if !stackNamePattern.MatchString(s.StackName) {
		errs = append(errs, fmt.Errorf("%s %q: want a CloudFormation stack name (letter, then letters, digits, '-')", CtxStackName, s.StackName))
	}
	if len(s.JobPrefix) > maxJobPrefixLen || !jobPrefixPattern.MatchString(s.JobPrefix) {
		errs = append(errs, fmt.Errorf("%s %q: want 1..%d letters/digits with single inner dashes (it starts every Bedrock jobName)", CtxJobPrefix, s.JobPrefix, maxJobPrefixLen))
	}
	if len(s.BedrockModels) == 0 {
		errs = append(errs, fmt.Errorf("%s: at least one model is required", CtxBedrockModels))
	}
	seen := map[string]bool{}
	cat := s.catalog()
	for _, m := range s.BedrockModels {
		if seen[m] {
			errs = append(errs, fmt.Errorf("%s: %q is listed twice", CtxBedrockModels, m))
		}
		seen[m] = true
		if !modelIDPattern.MatchString(m) && !strings.HasPrefix(m, "arn:") {
			errs = append(errs, fmt.Errorf("%s: %q is not a Bedrock model or inference-profile id", CtxBedrockModels, m))
			continue
		}
		if e, ok := cat.Lookup(m); !ok || e.Provider != model.ProviderBedrock {
			errs = append(errs, fmt.Errorf("%s: %q is not a Bedrock model of the model catalog; add it with -c %s='{\"models\":[...]}' (see README, model catalog)", CtxBedrockModels, m, CtxModels))
		}
	}
	if s.AssetDir == "" {
		errs = append(errs, fmt.Errorf("%s: must not be empty", CtxAssetDir))
	}
	okLevel := false
	for _, l := range logLevels {
		okLevel = okLevel || s.LogLevel == l
	}
	if !okLevel {
		errs = append(errs, fmt.Errorf("%s %q: want one of %s", CtxLogLevel, s.LogLevel, strings.Join(logLevels, ", ")))
	}
	errs = append(errs, s.validateSageMaker()...)
	errs = append(errs, s.validateOps()...)
	if !slices.Contains(config.AuthModes, s.Auth) {
		errs = append(errs, fmt.Errorf("%s %q: want one of %s", CtxAuth, s.Auth, strings.Join(config.AuthModes, ", ")))
	}
	return errors.Join(errs...)
}

// catalog is the catalog the settings name (the embedded one when unset).
func (s Settings) catalog() *model.Catalog {
	if s.Catalog != nil {
		return s.Catalog
	}
	return model.Default()
}

// readModels reads the catalog override: a JSON string, or an object in cdk.json.
func readModels(node constructs.Node, s *Settings) error {
	v := node.TryGetContext(jsii.String(CtxModels))
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		s.ModelsOverride = strings.TrimSpace(t)
	case map[string]interface{}:
		b, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("context %s: %w", CtxModels, err)
		}
		s.ModelsOverride = string(b)
	default:
		return fmt.Errorf("context %s: want a JSON object (or a string holding one), got %T", CtxModels, v)
	}
	if s.ModelsOverride == "" {
		return nil
	}
	cat, err := model.Default().Merge([]byte(s.ModelsOverride))
	if err != nil {
		return fmt.Errorf("context %s: %w", CtxModels, err)
	}
	s.Catalog = cat
	return nil
}

// CheckAssets fails early, with a hint, when `make build` has not produced a bootstrap;
// otherwise the asset copy fails deep inside jsii with a less helpful message.
func (s Settings) CheckAssets() error {
	var errs []error
	for _, fn := range FunctionNames {
		p := filepath.Join(s.AssetDir, fn, "bootstrap")
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			errs = append(errs, fmt.Errorf("missing %s: run `make build` (or pass -c %s=<dir>)", p, CtxAssetDir))
		}
	}
	return errors.Join(errs...)
}
