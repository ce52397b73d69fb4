package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// anthropicSecretLogicalID is the secret's logical id from when the reconciler
// construct made it: kept, so an update of an existing stack does not replace
// the secret (and lose the key the operator put in it).
const anthropicSecretLogicalID = "ReconcilerAnthropicApiKey509A7841"

// Anthropic is the Anthropic provider's part of the stack: the API key secret,
// and read access to it for the functions that call Anthropic.
type Anthropic struct {
	Scope  constructs.Construct
	Secret awssecretsmanager.Secret
}

// NewAnthropic creates the key secret. The operator puts the key in it:
//
//	aws secretsmanager put-secret-value --secret-id <AnthropicKeySecretArn> --secret-string sk-ant-...
func NewAnthropic(scope constructs.Construct, id string) *Anthropic {
	c := constructs.NewConstruct(scope, jsii.String(id))
	a := &Anthropic{Scope: c}
	a.Secret = awssecretsmanager.NewSecret(c, jsii.String("ApiKey"), &awssecretsmanager.SecretProps{
		Description: jsii.String("mcpbatch Anthropic API key (put the key with put-secret-value; never logged)"),
	})
	a.Secret.Node().DefaultChild().(awscdk.CfnResource).OverrideLogicalId(jsii.String(anthropicSecretLogicalID))
	suppress(a.Secret, "AwsSolutions-SMG4",
		"The secret holds a third-party Anthropic API key that only the Anthropic console can issue; "+
			"Secrets Manager cannot rotate it, the operator rotates it there and puts the new value.")
	return a
}

// Grant lets fns read the key (GetSecretValue only) and tells them where it is.
func (a *Anthropic) Grant(fns ...*GoFunction) {
	for _, fn := range fns {
		fn.Function.AddEnvironment(jsii.String(config.EnvAnthropicSecretARN), a.Secret.SecretArn(), nil)
		fn.Role.AddToPrincipalPolicy(allow("ReadAnthropicKey", []string{"secretsmanager:GetSecretValue"}, []*string{a.Secret.SecretArn()}, nil))
	}
}
