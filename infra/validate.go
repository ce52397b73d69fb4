package main

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/app/routes"
	"github.com/mcpbatch/mcpbatch/shared/config"
)

// FnValidate checks file submits: the mcp function (60 s, 512 MB) answers
// validating and this one reads the file.
const FnValidate = routes.FnValidate

// ValidateProps connect the validate function to the rest of the stack.
type ValidateProps struct {
	Settings   Settings
	Reconciler ReconcilerSettings
	Data       *Data
	Bedrock    *BedrockRole
	Bus        awsevents.EventBus
	Functions  *Functions
	Anthropic  *Anthropic
}

// Validate is the validate function and its rule on the project bus.
type Validate struct {
	Scope    constructs.Construct
	Function *GoFunction
	Rule     awsevents.Rule
}

// NewValidate creates the function that validates file submits on "Input
// Validation Requested": two streaming passes over a file of up to 1 GiB (at
// about 13 MiB/s a pass measured in make dev, so about 3 minutes, within 15),
// memory bounded by the record cap (24 bytes a record, 24 MB at 1,000,000)
// plus buffers, then the provider inputs written and the job submitted.
func NewValidate(scope constructs.Construct, id string, p *ValidateProps) *Validate {
	c := constructs.NewConstruct(scope, jsii.String(id))
	stack := awscdk.Stack_Of(c)
	s := p.Settings
	v := &Validate{Scope: c}
	env := p.Functions.EnvWith(map[string]*string{
		// It submits, under the same quota as mcp and the reconciler.
		config.EnvBedrockQuota: jsii.String(strconv.Itoa(p.Reconciler.BedrockQuota)),
	})
	v.Function = NewGoFunction(c, "Validate", &GoFunctionProps{
		Name:        FnValidate,
		Description: "mcpbatch validate: checks a submitted input file, writes the provider inputs, starts the job",
		AssetDir:    s.AssetDir, Env: env, LogLevel: s.LogLevel,
		Timeout: awscdk.Duration_Minutes(jsii.Number(15)),
		// Lambda's CPU grows with memory: 2048 MB buys more than one vCPU for
		// the JSON work; the data held stays far below it.
		MemoryMB: 2048,
		Async:    true,
	})
	p.Anthropic.Grant(v.Function)

	d := p.Data
	g := v.Function
	d.GrantStore(g)
	// A failed validation announces Job Completed.
	g.Role.AddToPrincipalPolicy(allow("PutProjectEvents", []string{"events:PutEvents"}, []*string{p.Bus.EventBusArn()}, nil))
	// Reads the file (an upload or a file under inputs/) and the submit's request under input/<job>/.
	g.Role.AddToPrincipalPolicy(allow("ReadInputFiles", []string{"s3:GetObject"}, d.ObjectArns(PrefixUploads, PrefixInputs, PrefixInput), nil))
	// Without ListBucket a missing file reads as AccessDenied rather than NoSuchKey.
	g.Role.AddToPrincipalPolicy(allow("ListInputFiles", []string{"s3:ListBucket"}, []*string{d.Bucket.BucketArn()},
		map[string]interface{}{"StringLike": map[string]interface{}{"s3:prefix": jsii.Strings(PrefixUploads+"*", PrefixInputs+"*", PrefixInput+"*")}}))
	g.Role.AddToPrincipalPolicy(allow("WriteProviderInputs", []string{"s3:PutObject", "s3:AbortMultipartUpload"}, d.ObjectArns(PrefixInput), nil))
	jobs := []*string{JobArnPattern(stack)}
	createOn := append(append([]*string{}, jobs...), p.Bedrock.ModelArns...)
	g.Role.AddToPrincipalPolicy(allow("CreateBatchJobs", []string{"bedrock:CreateModelInvocationJob"}, createOn, nil))
	g.Role.AddToPrincipalPolicy(allow("TagBatchJobs", []string{"bedrock:TagResource"}, jobs,
		map[string]interface{}{"ForAllValues:StringLike": map[string]interface{}{"aws:TagKeys": jsii.Strings("mcpbatch:*")}}))
	g.Role.AddToPrincipalPolicy(allow("PassBedrockRole", []string{"iam:PassRole"}, []*string{p.Bedrock.Role.RoleArn()},
		map[string]interface{}{"StringEquals": map[string]interface{}{"iam:PassedToService": bedrockPrincipal}}))

	v.Rule = routeRule(c, p.Bus, "", g)
	suppressWildcards(g.Role, wildObjects, wildJobs, wildModelRegions)
	suppress(g.DLQ, "AwsSolutions-SQS3",
		"This queue is itself the dead-letter queue of the validate function (EventBridge target DLQ, Lambda onFailure destination).")
	return v
}
