package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// Notifications is what completion notifications need in the stack: the
// master webhook signing secret, readable only by the function that delivers
// (nightly-report, the "Job Completed" consumer) and the mcp function (which
// derives each owner's verifying secret for get_webhook_secret), and the
// notification topic (the reports topic, which that function may already
// publish to).
type Notifications struct {
	Scope  constructs.Construct
	Secret awssecretsmanager.Secret
}

// NewNotifications creates the signing secret (64 random letters and digits),
// lets deliver and check (the mcp function, which validates notify at
// submit and serves get_webhook_secret) read it, and tells check which topic
// "sns": true goes to.
func NewNotifications(scope constructs.Construct, id string, deliver, check *GoFunction, topicArn *string) *Notifications {
	c := constructs.NewConstruct(scope, jsii.String(id))
	n := &Notifications{Scope: c}
	n.Secret = awssecretsmanager.NewSecret(c, jsii.String("WebhookSecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("mcpbatch master webhook signing secret: owners' verifying secrets derive from it (get_webhook_secret); several whitespace-separated values while rotating, current first"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength: jsii.Number(64), ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false),
		},
	})
	suppress(n.Secret, "AwsSolutions-SMG4",
		"Receivers hold secrets derived from this one; an automatic rotation would break them all at once. The operator "+
			"rotates it with put-secret-value \"<new> <old>\" (both signed while receivers move), then \"<new>\".")
	deliver.Function.AddEnvironment(jsii.String(config.EnvWebhookSecretARN), n.Secret.SecretArn(), nil)
	for _, fn := range []*GoFunction{deliver, check} {
		fn.Role.AddToPrincipalPolicy(allow("ReadWebhookSecret", []string{"secretsmanager:GetSecretValue"}, []*string{n.Secret.SecretArn()}, nil))
	}
	check.Function.AddEnvironment(jsii.String(config.EnvWebhookSecretARN), n.Secret.SecretArn(), nil)
	check.Function.AddEnvironment(jsii.String(config.EnvReportTopic), topicArn, nil)
	awscdk.NewCfnOutput(awscdk.Stack_Of(c), jsii.String("WebhookSecretArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("Master secret completion webhooks are signed with; each owner's receivers verify with the secret get_webhook_secret returns to that owner"),
		Value:       n.Secret.SecretArn(),
	})
	return n
}
