package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// functionURLAuth is the Function URL auth type of an auth mode: IAM signs
// requests; token mode lets requests through to the function, which checks keys.
func functionURLAuth(mode string) awslambda.FunctionUrlAuthType {
	if mode == config.AuthToken {
		return awslambda.FunctionUrlAuthType_NONE
	}
	return awslambda.FunctionUrlAuthType_AWS_IAM
}

// TokenKeys is the Secrets Manager secret of token mode: {"keys":[{"name","sha256"}]},
// SHA-256 hashes of the API keys only, never a key itself.
type TokenKeys struct {
	Scope  constructs.Construct
	Secret awssecretsmanager.Secret
}

// NewTokenKeys creates the (initially empty) key list and lets the mcp function read it.
func NewTokenKeys(scope constructs.Construct, id string, mcp *GoFunction) *TokenKeys {
	c := constructs.NewConstruct(scope, jsii.String(id))
	t := &TokenKeys{Scope: c}
	t.Secret = awssecretsmanager.NewSecret(c, jsii.String("ApiKeys"), &awssecretsmanager.SecretProps{
		Description: jsii.String("mcpbatch API keys for token auth: {\"keys\":[{\"name\":...,\"sha256\":<hex SHA-256 of the key>}]}"),
		// Not secret material: an empty list; operators add hashes (see infra/README.md, Auth).
		SecretStringValue: awscdk.SecretValue_UnsafePlainText(jsii.String(`{"keys":[]}`)),
		// Keep issued keys when the stack is replaced or deleted by mistake.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	// Only GetSecretValue on this secret (no grant helper: it adds DescribeSecret).
	mcp.Role.AddToPrincipalPolicy(allow("ReadApiKeys", []string{"secretsmanager:GetSecretValue"}, []*string{t.Secret.SecretArn()}, nil))
	mcp.Function.AddEnvironment(jsii.String(config.EnvAuthMode), jsii.String(config.AuthToken), nil)
	mcp.Function.AddEnvironment(jsii.String(config.EnvTokenSecret), t.Secret.SecretArn(), nil)
	suppress(t.Secret, "AwsSolutions-SMG4",
		"The secret holds SHA-256 hashes of API keys, not credentials to rotate; a key is rotated by "+
			"adding a new hash and deleting the old one, which takes effect within 5 minutes.")
	return t
}

// addTokenOutputs prints the token-mode client configuration and key management commands.
func (s *Stack) addTokenOutputs(endpoint string) {
	secret := *s.Tokens.Secret.SecretArn()
	s.output("ApiKeysSecretArn", "Secrets Manager secret with the hashed API keys (token auth)", jsii.String(secret))
	s.output("McpClientConfig", "Paste into an MCP client's config (mcpServers) for token mode; set MCPBATCH_API_KEY",
		jsii.String(fmt.Sprintf(`{"mcpServers":{"mcpbatch":{"type":"http","url":"%s","headers":{"Authorization":"Bearer ${MCPBATCH_API_KEY}"}}}}`, endpoint)))
	s.output("AddApiKeyCommand", "Create an API key for NAME: prints the key once and stores only its SHA-256",
		jsii.String(fmt.Sprintf(`KEY=mcpb_$(openssl rand -hex 32); H=$(printf %%s "$KEY" | sha256sum | cut -d' ' -f1); `+
			`aws secretsmanager get-secret-value --secret-id %s --query SecretString --output text | `+
			`jq --arg n "$NAME" --arg h "$H" '.keys |= (map(select(.name != $n)) + [{name:$n,sha256:$h}])' | `+
			`aws secretsmanager put-secret-value --secret-id %s --secret-string file:///dev/stdin >/dev/null && echo "$KEY"`, secret, secret)))
}
