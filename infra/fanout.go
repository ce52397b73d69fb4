package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// CtxValidateConcurrency is the context key of the validation queue's
// concurrency: how many validate invocations check units of jobs over many
// files at once (the SQS event source's maximum concurrency).
const CtxValidateConcurrency = "validateConcurrency"

// DefaultValidateConcurrency leaves most of an account's default 1,000
// concurrent executions to the other functions.
const DefaultValidateConcurrency = 100

// Lambda's maximum concurrency of an SQS event source is 2..1000 (AWS Lambda
// Developer Guide, "Configuring maximum concurrency for Amazon SQS event
// sources", read 2026-12-03).
const (
	minSQSMaxConcurrency = 2
	maxSQSMaxConcurrency = 1000
)

// validateQueueVisibility is the validation queue's visibility timeout:
// six times the validate function's 15 minutes, as Lambda asks of an event
// source queue (AWS Lambda Developer Guide, "Using Lambda with Amazon SQS",
// read 2026-12-03), so a unit still running is never delivered twice for it.
const validateQueueVisibility = 6 * 15

// FanoutProps connect the validation queue to the validate function.
type FanoutProps struct {
	Validate *Validate
}

// Fanout is the validation queue of jobs over many files, its dead-letter
// queue and the alarm on it.
type Fanout struct {
	Scope       constructs.Construct
	Queue       awssqs.Queue
	DLQ         awssqs.Queue
	DLQAlarm    awscloudwatch.Alarm
	Concurrency int
}

// NewFanout creates the validation queue the validate function sends units
// to and reads them from, at most Concurrency at once (context
// validateConcurrency): a unit that fails is delivered again, up to
// config.ValidateQueueReceives times, then kept in the DLQ.
func NewFanout(scope constructs.Construct, id string, p *FanoutProps) (*Fanout, error) {
	c := constructs.NewConstruct(scope, jsii.String(id))
	n, set, err := wholeContext(c.Node(), CtxValidateConcurrency, minSQSMaxConcurrency, maxSQSMaxConcurrency)
	if err != nil {
		return nil, err
	}
	if !set {
		n = DefaultValidateConcurrency
	}
	f := &Fanout{Scope: c, Concurrency: n}
	f.DLQ = awssqs.NewQueue(c, jsii.String("DLQ"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(dlqRetentionDays)),
	})
	f.Queue = awssqs.NewQueue(c, jsii.String("Queue"), &awssqs.QueueProps{
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(validateQueueVisibility)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: f.DLQ, MaxReceiveCount: jsii.Number(config.ValidateQueueReceives)},
	})
	g := p.Validate.Function
	g.Function.AddEnvironment(jsii.String(config.EnvValidateQueue), f.Queue.QueueUrl(), nil)
	// One unit a delivery: a unit is up to 64 MiB of checking, and a failed
	// one goes back alone (batch item failures reported all the same).
	g.Function.AddEventSource(awslambdaeventsources.NewSqsEventSource(f.Queue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(1),
		MaxConcurrency:          jsii.Number(float64(n)),
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	// The plan, the checks and the shards each send the next phase's units.
	g.Role.AddToPrincipalPolicy(allow("SendValidationUnits", []string{"sqs:SendMessage"}, []*string{f.Queue.QueueArn()}, nil))
	f.DLQAlarm = newDLQAlarm(c, f.DLQ, "mcpbatch validation units gave up (dead-letter queue not empty): see the validate function's logs, then redrive")
	suppress(f.DLQ, "AwsSolutions-SQS3", "This queue is itself the dead-letter queue of the validation queue.")
	return f, nil
}
