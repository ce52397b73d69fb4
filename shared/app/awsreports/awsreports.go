// Package awsreports wires the AWS clients only the nightly-report and ondemand
// functions need (SNS, bedrock-runtime). It is apart from package app so the mcp
// function does not link those SDK packages (their init code alone is large).
package awsreports

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrockrt"
)

// OnDemandModel gives the graph the on-demand runner's model over the real
// bedrock-runtime API (the ondemand function).
func OnDemandModel(_ context.Context, e *app.Env) error {
	e.Deps.OnDemandModel = &bedrockrt.Model{Client: bedrockruntime.NewFromConfig(e.Config, bedrockrt.NoSDKRetries)}
	return nil
}

// SNSPublishAPI is the one SNS call the notifier makes.
type SNSPublishAPI interface {
	Publish(ctx context.Context, in *sns.PublishInput, opts ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// SNSNotifier sends report notifications to an SNS topic.
type SNSNotifier struct{ Client SNSPublishAPI }

var _ pipeline.Notifier = (*SNSNotifier)(nil)

// Notify publishes one message.
func (n *SNSNotifier) Notify(ctx context.Context, topic, subject, message string) error {
	if topic == "" {
		return errors.New("no SNS topic: set recipients.sns_topic_arn on the pipeline or " + config.EnvReportTopic)
	}
	if _, err := n.Client.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Subject: aws.String(subject), Message: aws.String(message)}); err != nil {
		return fmt.Errorf("sns publish to %s: %w", topic, err)
	}
	return nil
}

// OwnerAttribute is the message attribute that names a job notification's
// owner, so a subscription's filter policy ({"owner": ["<owner>"]}) takes
// only that owner's notifications.
const OwnerAttribute = "owner"

// NotifyOwner publishes one message of owner's, with the owner attribute.
func (n *SNSNotifier) NotifyOwner(ctx context.Context, topic, owner, subject, message string) error {
	in := &sns.PublishInput{TopicArn: aws.String(topic), Subject: aws.String(subject), Message: aws.String(message),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			OwnerAttribute: {DataType: aws.String("String"), StringValue: aws.String(owner)},
		}}
	if _, err := n.Client.Publish(ctx, in); err != nil {
		return fmt.Errorf("sns publish to %s: %w", topic, err)
	}
	return nil
}

// Reports builds the pipeline runner of the nightly-report function, with SNS
// notifications. It returns nil, nil when deployed without a pipelines file.
func Reports(ctx context.Context, a *app.AWS) (*pipeline.Runner, error) {
	r, err := a.ReportsReader()
	if r == nil || err != nil {
		return r, err
	}
	r.Notify = &SNSNotifier{Client: sns.NewFromConfig(a.Config)}
	if r.Links, err = LinkSignerFromEnv(ctx, a.Config); err != nil {
		return nil, err
	}
	return r, nil
}
