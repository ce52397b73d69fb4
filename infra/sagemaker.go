package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// SageMaker context keys: the endpoints callers may invoke (comma list or JSON
// array; empty allows none) and the real-time response cap.
const (
	CtxSageMakerEndpoints        = "sagemakerEndpoints"
	CtxSageMakerMaxResponseBytes = "sagemakerMaxResponseBytes"

	FnSageMakerEvents = "sagemaker-events"

	// maxSageMakerResponseBytes: a tool response is buffered JSON; 6 MB is InvokeEndpoint's own limit.
	maxSageMakerResponseBytes = 6 * 1024 * 1024
)

// sageMakerEndpointPattern is SageMaker's EndpointName rule (≤ 63 characters).
var sageMakerEndpointPattern = regexp.MustCompile(`^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$`)

// readSageMakerSettings reads the SageMaker context keys into s.
func readSageMakerSettings(node constructs.Node, s *Settings) error {
	var errs []error
	switch t := node.TryGetContext(jsii.String(CtxSageMakerEndpoints)).(type) {
	case nil:
	case string:
		s.SageMakerEndpoints = config.List(t)
	case []interface{}:
		for _, e := range t {
			es, ok := e.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("context %s: list element %v is not a string", CtxSageMakerEndpoints, e))
				continue
			}
			s.SageMakerEndpoints = append(s.SageMakerEndpoints, config.List(es)...)
		}
	default:
		errs = append(errs, fmt.Errorf("context %s: want a comma list, got %T", CtxSageMakerEndpoints, t))
	}
	switch t := node.TryGetContext(jsii.String(CtxSageMakerMaxResponseBytes)).(type) {
	case nil:
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			errs = append(errs, fmt.Errorf("context %s %q: want a number of bytes", CtxSageMakerMaxResponseBytes, t))
		}
		s.SageMakerMaxResponseBytes = n
	case float64:
		s.SageMakerMaxResponseBytes = int(t)
	default:
		errs = append(errs, fmt.Errorf("context %s: want a number of bytes, got %T", CtxSageMakerMaxResponseBytes, t))
	}
	errs = append(errs, readEndpointSettings(node, s))
	return errors.Join(errs...)
}

// validateSageMaker checks the SageMaker settings.
func (s Settings) validateSageMaker() []error {
	var errs []error
	seen := map[string]bool{}
	for _, e := range s.SageMakerEndpoints {
		if !sageMakerEndpointPattern.MatchString(e) {
			errs = append(errs, fmt.Errorf("%s: %q is not a SageMaker endpoint name (letters, digits and inner dashes, up to 63)", CtxSageMakerEndpoints, e))
		}
		if seen[strings.ToLower(e)] {
			errs = append(errs, fmt.Errorf("%s: %q is listed twice", CtxSageMakerEndpoints, e))
		}
		seen[strings.ToLower(e)] = true
	}
	if n := s.SageMakerMaxResponseBytes; n < 0 || n > maxSageMakerResponseBytes {
		errs = append(errs, fmt.Errorf("%s %d: want 1..%d bytes (0 for the default %d)", CtxSageMakerMaxResponseBytes, n, maxSageMakerResponseBytes, config.DefaultSageMakerMaxResponseBytes))
	}
	return append(errs, s.validateEndpoints()...)
}

// SageMakerProps connect the SageMaker async notifications to the suite.
type SageMakerProps struct {
	Settings  Settings
	Data      *Data
	Bus       awsevents.EventBus
	Functions *Functions
}

// SageMaker is the async inference plumbing: the success and error topics an
// endpoint's AsyncInferenceConfig notifies, their key, and the sagemaker-events
// function subscribed to both.
type SageMaker struct {
	// Scope is the construct that groups these resources.
	Scope        constructs.Construct
	Key          awskms.Key
	SuccessTopic awssns.Topic
	ErrorTopic   awssns.Topic
	Events       *GoFunction
	EndpointArns []*string
}

// NewSageMaker creates the topics, the function, its subscriptions, the
// permissions, the bucket lifecycle of the sagemaker/ prefixes and the outputs.
func NewSageMaker(scope constructs.Construct, id string, p *SageMakerProps) *SageMaker {
	c := constructs.NewConstruct(scope, jsii.String(id))
	stack := awscdk.Stack_Of(c)
	d := p.Data
	m := &SageMaker{Scope: c}

	// A customer managed key (not alias/aws/sns): the endpoint's execution role must be
	// granted kms:GenerateDataKey on it to publish, which the AWS managed key cannot allow.
	m.Key = awskms.NewKey(c, jsii.String("TopicKey"), &awskms.KeyProps{
		Description:       jsii.String("mcpbatch SageMaker async notification topics"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_DESTROY,
	})
	topic := func(tid, name string) awssns.Topic {
		return awssns.NewTopic(c, jsii.String(tid), &awssns.TopicProps{
			DisplayName: jsii.String("mcpbatch SageMaker async " + name),
			MasterKey:   m.Key,
			EnforceSSL:  jsii.Bool(true),
		})
	}
	m.SuccessTopic = topic("SuccessTopic", "success")
	m.ErrorTopic = topic("ErrorTopic", "error")

	env := p.Functions.EnvWith(nil)
	m.Events = NewGoFunction(c, "Events", &GoFunctionProps{
		Name:        FnSageMakerEvents,
		Description: "mcpbatch SageMaker async inference notifications -> job result",
		AssetDir:    p.Settings.AssetDir, Env: env, LogLevel: p.Settings.LogLevel,
		// Reads at most ~350 KB of one output object per notification.
		Timeout:  awscdk.Duration_Seconds(jsii.Number(60)),
		MemoryMB: 256,
		Async:    true,
	})
	for _, t := range []awssns.Topic{m.SuccessTopic, m.ErrorTopic} {
		// The subscription DLQ catches what SNS could not hand to Lambda; the function's
		// onFailure destination (same queue) catches a handler that keeps failing.
		t.AddSubscription(awssnssubscriptions.NewLambdaSubscription(m.Events.Function, &awssnssubscriptions.LambdaSubscriptionProps{
			DeadLetterQueue: m.Events.DLQ,
		}))
	}

	for _, e := range p.Settings.SageMakerEndpoints {
		// Endpoint ARNs are lower case whatever the name's case.
		m.EndpointArns = append(m.EndpointArns, stack.FormatArn(&awscdk.ArnComponents{
			Service: jsii.String("sagemaker"), Resource: jsii.String("endpoint"), ResourceName: jsii.String(strings.ToLower(e)),
		}))
	}
	m.grant(p)
	m.lifecycle(d)
	m.outputs(stack, d)
	suppressWildcards(m.Events.Role, wildSageMakerObjects)
	suppressWildcards(p.Functions.MCP.Role, wildSageMakerObjects)
	suppress(m.Events.DLQ, "AwsSolutions-SQS3",
		"This queue is itself the dead-letter queue of the "+FnSageMakerEvents+
			" function (SNS subscription DLQ and Lambda onFailure destination); a DLQ of a DLQ adds nothing.")
	return m
}

var wildSageMakerObjects = wildcard{
	pattern: `/^Resource::<[A-Za-z0-9]+\.Arn>\/sagemaker\/(input|output|failure)\/\*$/`,
	reason: "SageMaker names async input and output objects at run time (job ids, SageMaker's own object ids); " +
		"the grant is limited to one sagemaker/ key prefix of this stack's own data bucket.",
}

// grant gives each function exactly the calls its SageMaker code makes.
func (m *SageMaker) grant(p *SageMakerProps) {
	d := p.Data
	ev := m.Events
	d.GrantStore(ev)
	ev.Role.AddToPrincipalPolicy(allow("PutProjectEvents", []string{"events:PutEvents"}, []*string{p.Bus.EventBusArn()}, nil))
	// Only outputs are read: a failure's reason arrives in the notification itself.
	ev.Role.AddToPrincipalPolicy(allow("ReadSageMakerOutput", []string{"s3:GetObject"}, d.ObjectArns(config.SageMakerOutputPrefix), nil))

	mcp := p.Functions.MCP
	if len(m.EndpointArns) > 0 {
		mcp.Role.AddToPrincipalPolicy(allow("InvokeSageMakerEndpoints",
			[]string{"sagemaker:InvokeEndpoint", "sagemaker:InvokeEndpointAsync"}, m.EndpointArns, nil))
	}
	// Bodies over 128,000 bytes are staged here; big outputs are handed out as presigned links.
	mcp.Role.AddToPrincipalPolicy(allow("StageSageMakerInput", []string{"s3:PutObject", "s3:AbortMultipartUpload"},
		d.ObjectArns(config.SageMakerInputPrefix), nil))
	mcp.Role.AddToPrincipalPolicy(allow("ReadSageMakerOutput", []string{"s3:GetObject"}, d.ObjectArns(config.SageMakerOutputPrefix), nil))
	for _, fn := range []*GoFunction{mcp, ev} {
		if len(p.Settings.SageMakerEndpoints) > 0 {
			fn.Function.AddEnvironment(jsii.String(config.EnvSageMakerEndpoints), jsii.String(strings.Join(p.Settings.SageMakerEndpoints, ",")), nil)
		}
		if p.Settings.SageMakerMaxResponseBytes > 0 {
			fn.Function.AddEnvironment(jsii.String(config.EnvSageMakerMaxResponseBytes), jsii.String(strconv.Itoa(p.Settings.SageMakerMaxResponseBytes)), nil)
		}
	}
}

// lifecycle: staged inputs are raw files; outputs back results served for a job's whole TTL.
func (m *SageMaker) lifecycle(d *Data) {
	for _, r := range []struct {
		id, prefix string
		days       float64
	}{
		{"expire-sagemaker-input", config.SageMakerInputPrefix, rawFileDays},
		{"expire-sagemaker-output", config.SageMakerOutputPrefix, keptFileDays},
		{"expire-sagemaker-failure", config.SageMakerFailurePrefix, rawFileDays},
	} {
		d.Bucket.AddLifecycleRule(&awss3.LifecycleRule{
			Id: jsii.String(r.id), Prefix: jsii.String(r.prefix), Expiration: awscdk.Duration_Days(jsii.Number(r.days)),
		})
	}
}

func (m *SageMaker) outputs(stack awscdk.Stack, d *Data) {
	out := func(id, desc string, v *string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Description: jsii.String(desc), Value: v})
	}
	bucket := *d.Bucket.BucketName()
	outPath := "s3://" + bucket + "/" + config.SageMakerOutputPrefix
	failPath := "s3://" + bucket + "/" + config.SageMakerFailurePrefix
	out("SageMakerSuccessTopicArn", "SNS topic for an async endpoint's NotificationConfig.SuccessTopic", m.SuccessTopic.TopicArn())
	out("SageMakerErrorTopicArn", "SNS topic for an async endpoint's NotificationConfig.ErrorTopic", m.ErrorTopic.TopicArn())
	out("SageMakerS3OutputPath", "AsyncInferenceConfig.OutputConfig.S3OutputPath", jsii.String(outPath))
	out("SageMakerS3FailurePath", "AsyncInferenceConfig.OutputConfig.S3FailurePath", jsii.String(failPath))
	out("SageMakerTopicKeyArn", "KMS key of the two topics (the endpoint's execution role publishes with it)", m.Key.KeyArn())
	out("SageMakerEventsDlqUrl", "Dead-letter queue of the sagemaker-events function", m.Events.DLQ.QueueUrl())
	cfg, _ := json.Marshal(map[string]any{
		"OutputConfig": map[string]any{
			"S3OutputPath": outPath, "S3FailurePath": failPath,
			"NotificationConfig": map[string]any{
				"SuccessTopic": *m.SuccessTopic.TopicArn(), "ErrorTopic": *m.ErrorTopic.TopicArn(),
				"IncludeInferenceResponseIn": []string{"SUCCESS_NOTIFICATION_TOPIC"},
			},
		},
	})
	out("SageMakerAsyncInferenceConfig", "Pass to `aws sagemaker create-endpoint-config --async-inference-config`", jsii.String(string(cfg)))
	policy, _ := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []map[string]any{
			{"Sid": "ReadStagedInput", "Effect": "Allow", "Action": "s3:GetObject", "Resource": *d.Bucket.BucketArn() + "/" + config.SageMakerInputPrefix + "*"},
			{"Sid": "WriteOutputAndFailure", "Effect": "Allow", "Action": "s3:PutObject", "Resource": []string{
				*d.Bucket.BucketArn() + "/" + config.SageMakerOutputPrefix + "*", *d.Bucket.BucketArn() + "/" + config.SageMakerFailurePrefix + "*"}},
			{"Sid": "Notify", "Effect": "Allow", "Action": "sns:Publish", "Resource": []string{*m.SuccessTopic.TopicArn(), *m.ErrorTopic.TopicArn()}},
			{"Sid": "EncryptNotifications", "Effect": "Allow", "Action": []string{"kms:GenerateDataKey*", "kms:Decrypt"}, "Resource": *m.Key.KeyArn()},
		},
	})
	out("SageMakerExecutionRolePolicy", "Inline policy to add to the async endpoint's execution role", jsii.String(string(policy)))
}
