// Package announceapp builds the completion notifier of the Lambdas: webhooks
// signed with owner secrets derived from the stack's webhook secret (Secrets
// Manager) and the stack's notification topic (SNS).
package announceapp

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/awsreports"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/notify"
	"github.com/mcpbatch/mcpbatch/shared/service/announce"
)

// Checker is what the mcp function needs for notify: URL checks at submit,
// the topic's presence, and get_webhook_secret (each owner's secret, derived
// from the stack's secret, read when first asked); it publishes nothing.
func Checker(a *app.AWS) *announce.Service {
	return &announce.Service{Jobs: a.Graph.Core.Store, Log: a.Log, Webhooks: &notify.Webhook{Keys: keys(a)},
		Topic: &awsreports.SNSNotifier{}, TopicARN: os.Getenv(config.EnvReportTopic)}
}

// Deliverer is the consumer of "Job Completed" that sends the notifications
// (nightly-report). Without the webhook secret's ARN it refuses to send webhooks.
func Deliverer(ctx context.Context, a *app.AWS) (*announce.Service, error) {
	s := &announce.Service{Jobs: a.Graph.Core.Store, Log: a.Log,
		Topic: &awsreports.SNSNotifier{Client: sns.NewFromConfig(a.Config)}, TopicARN: os.Getenv(config.EnvReportTopic)}
	k := keys(a)
	if k == nil {
		return s, nil
	}
	if _, err := k.Masters(ctx); err != nil {
		return nil, err
	}
	s.Webhooks = &notify.Webhook{Keys: k}
	return s, nil
}

// keys reads the stack's webhook secret (nil without its ARN).
func keys(a *app.AWS) notify.Keys {
	arn := os.Getenv(config.EnvWebhookSecretARN)
	if arn == "" {
		return nil
	}
	return &secretKeys{client: secretsmanager.NewFromConfig(a.Config), arn: arn}
}

// secretKeys reads the master secrets from Secrets Manager and keeps them for
// refresh, so a rotation (put-secret-value) reaches warm functions within it.
type secretKeys struct {
	client *secretsmanager.Client
	arn    string

	mu   sync.Mutex
	keys [][]byte
	read time.Time
}

const refresh = 5 * time.Minute

func (k *secretKeys) Masters(ctx context.Context) ([][]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys != nil && time.Since(k.read) < refresh {
		return k.keys, nil
	}
	out, err := k.client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(k.arn)})
	if err != nil {
		return nil, fmt.Errorf("read the webhook signing secret: %w", err)
	}
	keys, err := notify.ParseKeys(aws.ToString(out.SecretString))
	if err != nil {
		return nil, err
	}
	k.keys, k.read = keys, time.Now()
	return keys, nil
}
