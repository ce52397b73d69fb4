// Package lambdaenv is what every function reads from Lambda's environment:
// the AWS configuration and the JSON logger. It links no service client, so
// the providers function stays lean.
package lambdaenv

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
	"github.com/mcpbatch/mcpbatch/shared/config"
)

// lambdaConfig is the AWS configuration of a Lambda, read from what Lambda
// sets: AWS_REGION, the execution role's credentials (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, or the container credentials
// endpoint SnapStart uses) and AWS_ENDPOINT_URL (tests point it at moto).
//
// It stands in for config.LoadDefaultConfig, whose shared-file credential
// chain (SSO, STS web identity and assume-role, console sign-in) links four
// service clients into every bootstrap (about 1 MB each time) that a Lambda
// never uses. Per-service AWS_ENDPOINT_URL_<SERVICE> is read through
// serviceEndpoints, the way the SDK's own env config does. Not read: ~/.aws
// files, AWS_PROFILE, AWS_MAX_ATTEMPTS / AWS_RETRY_MODE (the SDK's standard
// retryer applies).
func lambdaConfig(getenv func(string) string) (aws.Config, error) {
	cfg := aws.Config{Region: getenv("AWS_REGION")}
	if cfg.Region == "" {
		cfg.Region = getenv("AWS_DEFAULT_REGION")
	}
	if cfg.Region == "" {
		return cfg, errors.New("load AWS config: AWS_REGION is not set (Lambda sets it)")
	}
	if ep := getenv("AWS_ENDPOINT_URL"); ep != "" {
		cfg.BaseEndpoint = aws.String(ep)
	}
	cfg.ConfigSources = append(cfg.ConfigSources, serviceEndpoints(getenv))
	switch full, rel := getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI"), getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); {
	case full != "" || rel != "":
		uri := full
		if uri == "" {
			uri = "http://169.254.170.2" + rel
		}
		cfg.Credentials = aws.NewCredentialsCache(endpointcreds.New(uri, func(o *endpointcreds.Options) {
			o.AuthorizationToken = getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
			if file := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); file != "" {
				o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
					b, err := os.ReadFile(file)
					return strings.TrimSpace(string(b)), err
				})
			}
		}))
	case getenv("AWS_ACCESS_KEY_ID") != "" && getenv("AWS_SECRET_ACCESS_KEY") != "":
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(
			getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"), getenv("AWS_SESSION_TOKEN")))
	default:
		return cfg, errors.New("load AWS config: no credentials: neither AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY nor AWS_CONTAINER_CREDENTIALS_FULL_URI/RELATIVE_URI is set (Lambda sets them)")
	}
	return cfg, nil
}

// serviceEndpoints answers the SDK clients' lookup of a service's own
// endpoint (AWS_ENDPOINT_URL_<SDK ID upper-cased, spaces as underscores>,
// e.g. AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME), as config.LoadDefaultConfig's env
// source does; each client asks it only when that variable is set.
type serviceEndpoints func(string) string

func (f serviceEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v := f("AWS_ENDPOINT_URL_" + strings.ToUpper(strings.ReplaceAll(sdkID, " ", "_")))
	return v, v != "", nil
}

// Config is the function's AWS configuration (lambdaConfig over the process environment).
func Config() (aws.Config, error) { return lambdaConfig(os.Getenv) }

// Logger is the JSON logger every function uses; MCPBATCH_LOG_LEVEL picks the level.
func Logger() *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(config.Get(config.EnvLogLevel, "INFO")))
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
}

// Must ends a Lambda's init on err: a function that cannot wire itself must not
// take events it would only fail (Lambda reports the init error and retries).
func Must(what string, err error) {
	if err != nil {
		Logger().Error(what, "error", err)
		os.Exit(1)
	}
}
