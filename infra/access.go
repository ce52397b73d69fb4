package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// Least privilege, in one place: each function gets exactly the actions its handler calls,
// written out (no grant helpers with action wildcards such as s3:GetObject*).

// tableActions are the item-level calls the DynamoDB store makes. Transactions are
// authorized per item action, so TransactWriteItems needs no action of its own. No Scan.
var tableActions = []string{
	"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
	"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
	"dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:DescribeTable",
}

func allow(sid string, actions []string, resources []*string, conditions map[string]interface{}) awsiam.PolicyStatement {
	p := &awsiam.PolicyStatementProps{
		Sid:       jsii.String(sid),
		Actions:   jsii.Strings(actions...),
		Resources: &resources,
	}
	if conditions != nil {
		p.Conditions = &conditions
	}
	return awsiam.NewPolicyStatement(p)
}

// GrantStore gives g what the job store (dynamostore) calls: the table, its
// indexes, and the objects it keeps jobs too large for an item in, which it
// replaces on each write. Every function that reads or writes jobs gets it.
func (d *Data) GrantStore(g *GoFunction) {
	g.Role.AddToPrincipalPolicy(allow("TableReadWrite", tableActions, []*string{d.Table.TableArn()}, nil))
	g.Role.AddToPrincipalPolicy(allow("TableQueryIndexes", []string{"dynamodb:Query"}, d.TableIndexArns(), nil))
	g.Role.AddToPrincipalPolicy(allow("LargeJobObjects", []string{"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
		d.ObjectArns(PrefixJobs), nil))
	suppressWildcards(g.Role, wildJobObjects)
}

func grantAccess(f *Functions, p *FunctionsProps) {
	stack := awscdk.Stack_Of(f.Scope)
	d := p.Data
	jobs := []*string{JobArnPattern(stack)}

	tableRW := d.GrantStore
	putEvents := func(g *GoFunction) {
		g.Role.AddToPrincipalPolicy(allow("PutProjectEvents", []string{"events:PutEvents"}, []*string{p.Bus.EventBusArn()}, nil))
	}

	// mcp: submit (input/ upload), read results and pages, write exports; drive Bedrock jobs.
	mcp := f.MCP
	tableRW(mcp)
	// A submit Bedrock refuses, or a cancel before submit, ends the job here and announces it.
	putEvents(mcp)
	// cache/ is the result cache's index, read and written by submit_batch reuse (a
	// missing entry is a miss only with ListBucket on its prefix: S3 answers 403 without).
	mcp.Role.AddToPrincipalPolicy(allow("BucketObjects", []string{"s3:GetObject"},
		d.ObjectArns(PrefixInput, PrefixOutput, PrefixResults, PrefixExports, PrefixUploads, PrefixCache), nil))
	// mcp writes Bedrock's input, exports, cache entries and (through the presigned PUTs it
	// signs) uploads; provider output and stored results are written only by ingest and the runners.
	mcp.Role.AddToPrincipalPolicy(allow("WriteObjects", []string{"s3:PutObject", "s3:AbortMultipartUpload"},
		d.ObjectArns(PrefixInput, PrefixExports, PrefixUploads, PrefixCache), nil))
	mcp.Role.AddToPrincipalPolicy(allow("BucketList", []string{"s3:ListBucket"}, []*string{d.Bucket.BucketArn()},
		map[string]interface{}{"StringLike": map[string]interface{}{"s3:prefix": jsii.Strings(
			PrefixInput+"*", PrefixOutput+"*", PrefixResults+"*", PrefixExports+"*", PrefixUploads+"*", PrefixCache+"*")}}))
	// submit_batch input_uri reads files operators copied to inputs/ (read only).
	mcp.Role.AddToPrincipalPolicy(allow("ReadInputs", []string{"s3:GetObject"}, d.ObjectArns(PrefixInputs), nil))
	// CreateModelInvocationJob is authorized on the new job and on the model it runs.
	createOn := append(append([]*string{}, jobs...), p.Bedrock.ModelArns...)
	mcp.Role.AddToPrincipalPolicy(allow("CreateBatchJobs", []string{"bedrock:CreateModelInvocationJob"}, createOn, nil))
	// Submit tags each job (mcpbatch:job, mcpbatch:owner-hash); tagging on create is authorized
	// as bedrock:TagResource on the new job, limited here to the suite's own tag keys.
	mcp.Role.AddToPrincipalPolicy(allow("TagBatchJobs", []string{"bedrock:TagResource"}, jobs,
		map[string]interface{}{"ForAllValues:StringLike": map[string]interface{}{"aws:TagKeys": jsii.Strings("mcpbatch:*")}}))
	mcp.Role.AddToPrincipalPolicy(allow("ManageBatchJobs",
		[]string{"bedrock:GetModelInvocationJob", "bedrock:StopModelInvocationJob"}, jobs, nil))
	// ListModelInvocationJobs has no resource type in IAM: it only takes "*".
	mcp.Role.AddToPrincipalPolicy(allow("ListBatchJobs", []string{"bedrock:ListModelInvocationJobs"}, jsiiStar(), nil))
	// submit_batch dry_run counts its input with bedrock-runtime CountTokens, which takes a
	// foundation model id (the counter sends the base id), so only those ARNs are granted.
	var countOn []*string
	for _, a := range p.Bedrock.ModelArns {
		if strings.Contains(*a, ":foundation-model/") {
			countOn = append(countOn, a)
		}
	}
	mcp.Role.AddToPrincipalPolicy(allow("CountTokens", []string{"bedrock:CountTokens"}, countOn, nil))
	mcp.Role.AddToPrincipalPolicy(allow("PassBedrockRole", []string{"iam:PassRole"},
		[]*string{p.Bedrock.Role.RoleArn()},
		map[string]interface{}{"StringEquals": map[string]interface{}{"iam:PassedToService": bedrockPrincipal}}))

	// bedrock-events: move the job status forward, read counts from Bedrock, announce output.
	be := f.BedrockEvents
	tableRW(be)
	putEvents(be)
	be.Role.AddToPrincipalPolicy(allow("GetBatchJobs", []string{"bedrock:GetModelInvocationJob"}, jobs, nil))

	// ingest: read Bedrock's output, spill large record outputs to results/, announce completion.
	in := f.Ingest
	tableRW(in)
	putEvents(in)
	in.Role.AddToPrincipalPolicy(allow("ReadOutput", []string{"s3:GetObject"}, d.ObjectArns(PrefixOutput), nil))
	// The record ids written at submit (ids.jsonl; ids.txt of older jobs) tell an unknown recordId
	// in the output from a real one, and a retry's kept input ordinals (ordinals.jsonl) where
	// its records go; a deadline re-drive reads the caller's records (inputs.jsonl) and writes
	// the ones no batch part produced, with their ordinals, for the on-demand run.
	inputObj := func(name string) *string { return jsii.String(*d.Bucket.BucketArn() + "/" + PrefixInput + "*/" + name) }
	in.Role.AddToPrincipalPolicy(allow("ReadRecordIds", []string{"s3:GetObject"},
		[]*string{inputObj("ids.jsonl"), inputObj("ids.txt"), inputObj("inputs.jsonl"), inputObj("ordinals.jsonl")}, nil))
	in.Role.AddToPrincipalPolicy(allow("WriteRedriveInput", []string{"s3:PutObject", "s3:AbortMultipartUpload"},
		[]*string{inputObj("redrive/records.jsonl"), inputObj("redrive/records.ordinals.jsonl")}, nil))
	in.Role.AddToPrincipalPolicy(allow("ListOutput", []string{"s3:ListBucket"}, []*string{d.Bucket.BucketArn()},
		map[string]interface{}{"StringLike": map[string]interface{}{"s3:prefix": jsii.Strings(PrefixOutput + "*")}}))
	in.Role.AddToPrincipalPolicy(allow("WriteResults", []string{"s3:PutObject", "s3:AbortMultipartUpload"},
		d.ObjectArns(PrefixResults), nil))
}

func jsiiStar() []*string { return []*string{jsii.String("*")} }
