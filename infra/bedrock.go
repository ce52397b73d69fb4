package main

import (
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

const bedrockPrincipal = "bedrock.amazonaws.com"

// BedrockRoleProps configure the batch service role.
type BedrockRoleProps struct {
	Data    *Data
	Catalog *model.Catalog
	Models  []string
}

// BedrockRole is the service role Bedrock assumes to run this stack's batch jobs:
// read input/, write output/, invoke only the allowed models.
type BedrockRole struct {
	// Scope is the construct that groups these resources (not embedded, so the Go
	// wrapper can never be handed to jsii as a construct by mistake).
	Scope constructs.Construct
	Role  awsiam.Role
	// ModelArns are the foundation-model and inference-profile ARNs of the allowed models;
	// the mcp function's CreateModelInvocationJob is scoped to the same list.
	ModelArns []*string
}

// NewBedrockRole creates the batch service role.
func NewBedrockRole(scope constructs.Construct, id string, props *BedrockRoleProps) *BedrockRole {
	c := constructs.NewConstruct(scope, jsii.String(id))
	stack := awscdk.Stack_Of(c)
	b := &BedrockRole{Scope: c, ModelArns: ModelArns(stack, props.Catalog, props.Models)}
	bucket := props.Data.Bucket

	// Confused-deputy guard: only Bedrock jobs in this account and region may assume the role.
	trust := awsiam.NewServicePrincipal(jsii.String(bedrockPrincipal), &awsiam.ServicePrincipalOpts{
		Conditions: &map[string]interface{}{
			"StringEquals": map[string]interface{}{"aws:SourceAccount": stack.Account()},
			"ArnLike":      map[string]interface{}{"aws:SourceArn": JobArnPattern(stack)},
		},
	})
	// aws:ResourceAccount pins S3 access to a bucket this account owns, even if the
	// bucket name were ever freed and taken by someone else.
	sameAccount := &map[string]interface{}{
		"StringEquals": map[string]interface{}{"aws:ResourceAccount": stack.Account()},
	}
	doc := awsiam.NewPolicyDocument(&awsiam.PolicyDocumentProps{Statements: &[]awsiam.PolicyStatement{
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("InvokeAllowedModels"),
			Actions:   jsii.Strings("bedrock:InvokeModel"),
			Resources: &b.ModelArns,
		}),
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("ReadInput"),
			Actions:    jsii.Strings("s3:GetObject"),
			Resources:  &[]*string{bucket.ArnForObjects(jsii.String(PrefixInput + "*"))},
			Conditions: sameAccount,
		}),
		// Bedrock lists the input location (and checks the output location) before it starts;
		// the s3:prefix condition keeps the listing inside those two prefixes.
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("ListInputOutput"),
			Actions:   jsii.Strings("s3:ListBucket"),
			Resources: &[]*string{bucket.BucketArn()},
			Conditions: &map[string]interface{}{
				"StringEquals": map[string]interface{}{"aws:ResourceAccount": stack.Account()},
				"StringLike":   map[string]interface{}{"s3:prefix": jsii.Strings(PrefixInput+"*", PrefixOutput+"*")},
			},
		}),
		awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("WriteOutput"),
			Actions:    jsii.Strings("s3:PutObject"),
			Resources:  &[]*string{bucket.ArnForObjects(jsii.String(PrefixOutput + "*"))},
			Conditions: sameAccount,
		}),
	}})
	b.Role = awsiam.NewRole(c, jsii.String("ServiceRole"), &awsiam.RoleProps{
		AssumedBy:      trust,
		Description:    jsii.String("Bedrock batch inference service role for mcpbatch jobs"),
		InlinePolicies: &map[string]awsiam.PolicyDocument{"BatchInference": doc},
	})
	return b
}

// JobArnPattern matches every Bedrock batch job in the stack's account and region. Job ARNs
// end in an id Bedrock assigns at creation, so they cannot be named in advance.
func JobArnPattern(stack awscdk.Stack) *string {
	return stack.FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("bedrock"),
		Resource:     jsii.String("model-invocation-job"),
		ResourceName: jsii.String("*"),
		ArnFormat:    awscdk.ArnFormat_SLASH_RESOURCE_NAME,
	})
}

// ModelArns maps the allowed model ids, through the model catalog, to the ARNs
// InvokeModel and CreateModelInvocationJob are checked against: each model's base
// id as a foundation-model in this region, or in any region when the catalog
// lists a cross-region profile for it (the profile routes to the base model in
// other regions of its geography), and every inference profile the
// catalog lists for it as an inference-profile in this account and region (the
// on-demand path picks the profile of the deploying region). An id the catalog
// knows only as an alias that is an ARN (an application inference profile) is
// granted as given. Foundation models come first, then profiles, each in
// first-seen order, without duplicates.
func ModelArns(stack awscdk.Stack, cat *model.Catalog, models []string) []*string {
	var bases, profiles, asGiven []string
	anyRegion := map[string]bool{} // bases reached through a cross-region profile
	seen := map[string]bool{}
	add := func(list *[]string, key, v string) {
		if !seen[key] {
			seen[key] = true
			*list = append(*list, v)
		}
	}
	for _, id := range models {
		m, ok := cat.Lookup(id)
		if !ok {
			continue // Settings.Validate refuses it first
		}
		add(&bases, "fm:"+m.ID, m.ID)
		anyRegion[m.ID] = anyRegion[m.ID] || len(m.Profiles) > 0
		if strings.HasPrefix(id, "arn:") {
			add(&asGiven, "arn:"+id, id)
		}
		for _, g := range sortedGeographies(m.Profiles) {
			add(&profiles, "ip:"+m.Profiles[g], m.Profiles[g])
		}
	}
	out := make([]*string, 0, len(bases)+len(profiles)+len(asGiven))
	for _, base := range bases {
		region := stack.Region() // a model called only in this region
		if anyRegion[base] {
			region = jsii.String("*")
		}
		out = append(out, stack.FormatArn(&awscdk.ArnComponents{
			Service:      jsii.String("bedrock"),
			Region:       region,
			Account:      jsii.String(""),
			Resource:     jsii.String("foundation-model"),
			ResourceName: jsii.String(base),
			ArnFormat:    awscdk.ArnFormat_SLASH_RESOURCE_NAME,
		}))
	}
	for _, p := range profiles {
		out = append(out, stack.FormatArn(&awscdk.ArnComponents{
			Service:      jsii.String("bedrock"),
			Resource:     jsii.String("inference-profile"),
			ResourceName: jsii.String(p),
			ArnFormat:    awscdk.ArnFormat_SLASH_RESOURCE_NAME,
		}))
	}
	for _, a := range asGiven {
		out = append(out, jsii.String(a))
	}
	return out
}

func sortedGeographies(p map[string]string) []string {
	out := make([]string, 0, len(p))
	for g := range p {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}
