// Package awsstack sets up, for tests, one copy of the stack's stateful
// resources (table, bucket, bus) in moto_server and the environment the stack
// gives a function, so app.FromEnv wires the deployed adapters in process.
package awsstack

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

// Stack names the resources of one test.
type Stack struct {
	Table, Bucket, Bus string
	Store              *dynamostore.Store
	S3                 *s3.Client
}

var seq atomic.Int64

// New creates the resources in srv and sets the function's environment
// (t.Setenv: the test must not be parallel). extra are more NAME=value pairs.
func New(t *testing.T, srv *motoserver.Server, extra map[string]string) *Stack {
	t.Helper()
	name := fmt.Sprintf("mcpbatch-app-%d", seq.Add(1))
	st := &Stack{Table: name, Bucket: name, Bus: name}
	cfg := srv.Config()
	cfg.BaseEndpoint = aws.String(srv.Endpoint)
	ctx := t.Context()
	ddb := dynamodb.NewFromConfig(cfg)
	if err := dynamostore.CreateTable(ctx, ddb, st.Table); err != nil {
		t.Fatal(err)
	}
	st.Store = dynamostore.New(ddb, st.Table)
	st.S3 = s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := st.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(st.Bucket)}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	if _, err := eventbridge.NewFromConfig(cfg).CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(st.Bus)}); err != nil {
		t.Fatalf("create event bus: %v", err)
	}
	env := map[string]string{
		"AWS_ENDPOINT_URL": srv.Endpoint, "AWS_REGION": cfg.Region,
		"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_EC2_METADATA_DISABLED": "true",
		config.EnvTable: st.Table, config.EnvBucket: st.Bucket, config.EnvBus: st.Bus,
		config.EnvBedrockRoleARN: "arn:aws:iam::123456789012:role/mcpbatch-bedrock",
	}
	for k, v := range extra {
		env[k] = v
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	return st
}
