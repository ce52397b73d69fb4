// Package announceapp builds the completion notifier of the Lambdas: webhooks
// signed with the stack's webhook secret (Secrets Manager) and the stack's
// notification topic (SNS).
package announceapp

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/awsreports"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/notify"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
)

// Checker is what the mcp function needs to accept notify at submit: URL
// checks and the topic's presence; it holds no secret and publishes nothing.
func Checker(a *app.AWS) *announce.Service {
	return &announce.Service{Jobs: a.Graph.Core.Store, Log: a.Log, Webhooks: &notify.Webhook{},
		Topic: &awsreports.SNSNotifier{}, TopicARN: os.Getenv(config.EnvReportTopic)}
}

// Deliverer is the consumer of "Job Completed" that sends the notifications
// (nightly-report). Without the webhook secret's ARN it refuses to send webhooks.
func Deliverer(ctx context.Context, a *app.AWS) (*announce.Service, error) {
	s := &announce.Service{Jobs: a.Graph.Core.Store, Log: a.Log,
		Topic: &awsreports.SNSNotifier{Client: sns.NewFromConfig(a.Config)}, TopicARN: os.Getenv(config.EnvReportTopic)}
	arn := os.Getenv(config.EnvWebhookSecretARN)
	if arn == "" {
		return s, nil
	}
	out, err := secretsmanager.NewFromConfig(a.Config).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("read the webhook signing secret: %w", err)
	}
	s.Webhooks = &notify.Webhook{Secret: []byte(aws.ToString(out.SecretString))}
	return s, nil
}
