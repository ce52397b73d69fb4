package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// Notifications is what completion notifications need in the stack: the
// webhook signing secret, readable only by the function that delivers
// (nightly-report, the "Job Completed" consumer), and the notification topic
// (the reports topic, which that function may already publish to).
type Notifications struct {
	Scope  constructs.Construct
	Secret awssecretsmanager.Secret
}

// NewNotifications creates the signing secret (64 random letters and digits),
// lets deliver read it, and tells check (the mcp function, which validates
// notify at submit) which topic "sns": true goes to.
func NewNotifications(scope constructs.Construct, id string, deliver, check *GoFunction, topicArn *string) *Notifications {
	c := constructs.NewConstruct(scope, jsii.String(id))
	n := &Notifications{Scope: c}
	n.Secret = awssecretsmanager.NewSecret(c, jsii.String("WebhookSecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("mcpbatch webhook signing secret (HMAC-SHA256; receivers verify X-Mcpbatch-Signature with it)"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength: jsii.Number(64), ExcludePunctuation: jsii.Bool(true), IncludeSpace: jsii.Bool(false),
		},
	})
	suppress(n.Secret, "AwsSolutions-SMG4",
		"Every webhook receiver holds a copy of this secret to verify deliveries; an automatic rotation would break "+
			"them all at once. The operator rotates it with put-secret-value after giving receivers the new value.")
	deliver.Function.AddEnvironment(jsii.String(config.EnvWebhookSecretARN), n.Secret.SecretArn(), nil)
	deliver.Role.AddToPrincipalPolicy(allow("ReadWebhookSecret", []string{"secretsmanager:GetSecretValue"}, []*string{n.Secret.SecretArn()}, nil))
	check.Function.AddEnvironment(jsii.String(config.EnvReportTopic), topicArn, nil)
	awscdk.NewCfnOutput(awscdk.Stack_Of(c), jsii.String("WebhookSecretArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("Secret completion webhooks are signed with: give its value to your receivers (aws secretsmanager get-secret-value)"),
		Value:       n.Secret.SecretArn(),
	})
	return n
}
