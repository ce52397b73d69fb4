package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3vectors"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/app/vectorsapp"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/vectors"
)

// Vectors is the Amazon S3 Vectors bucket embedding jobs write their indexes
// into. Indexes are made on first use by the functions (one per owner and
// name, see shared/index), so the grants name the bucket's indexes.
type Vectors struct {
	Scope  constructs.Construct
	Bucket awss3vectors.CfnVectorBucket
}

// VectorsProps wire the bucket to the functions that use it.
type VectorsProps struct {
	Settings  Settings
	Functions *Functions
	Data      *Data
	// OnDemand is the on-demand runner (reports.go), which writes the vectors of on-demand jobs.
	OnDemand *GoFunction
	// NightlyReport runs corpus pipelines: it submits into indexes and deletes stale vectors.
	NightlyReport *GoFunction
}

var wildVectorMetadata = wildcard{
	pattern: `/^Resource::<[A-Za-z0-9]+\.Arn>\/input\/\*\/index-metadata\.jsonl$/`,
	reason: "ingest reads only the metadata file each embedding submit writes at input/<job id>/index-metadata.jsonl; " +
		"job ids are created at run time, and the grant names the file, not the job's input.",
}

var wildVectorIndexes = wildcard{
	pattern: `/^Resource::<[A-Za-z0-9]+\.VectorBucketArn>\/index\/\*$/`,
	reason: "S3 Vectors index names are derived at run time from each caller and index name (a hash), so they " +
		"cannot be listed in advance; the grant is limited to the indexes of this stack's own vector bucket.",
}

// NewVectors creates the vector bucket (SSE-S3 by default) and grants:
// mcp opens, searches, lists and deletes indexes and embeds queries; ingest
// and ondemand write vectors and commit jobs. CreateVectorBucket is never granted.
func NewVectors(scope constructs.Construct, id string, p *VectorsProps) *Vectors {
	c := constructs.NewConstruct(scope, jsii.String(id))
	v := &Vectors{Scope: c, Bucket: awss3vectors.NewCfnVectorBucket(c, jsii.String("Bucket"), &awss3vectors.CfnVectorBucketProps{})}
	// A vector bucket that still holds indexes cannot be deleted, so a Delete
	// policy would fail the stack's deletion; like the data bucket, it is kept
	// (and the indexes with it) for the operator to remove.
	v.Bucket.ApplyRemovalPolicy(awscdk.RemovalPolicy_RETAIN, nil)
	bucketArn := v.Bucket.AttrVectorBucketArn()
	indexes := jsii.String(*bucketArn + "/index/*")
	catalog := jsii.String(*bucketArn + "/index/" + index.CatalogIndex)
	write := []string{"s3vectors:GetIndex", "s3vectors:GetVectors", "s3vectors:PutVectors", "s3vectors:ListVectors"}
	for _, g := range []*GoFunction{p.Functions.MCP, p.Functions.Ingest, p.OnDemand, p.NightlyReport} {
		// The ARN: the resource's Ref is not documented as its name; the functions take either.
		g.Function.AddEnvironment(jsii.String(vectorsapp.EnvVectorBucket), bucketArn, nil)
		g.Role.AddToPrincipalPolicy(allow("WriteVectors", write, []*string{indexes}, nil))
		// Every process makes the catalog index on first use when it is not there yet.
		g.Role.AddToPrincipalPolicy(allow("CreateVectorCatalog", []string{"s3vectors:CreateIndex"}, []*string{catalog}, nil))
		suppressWildcards(g.Role, wildVectorIndexes)
	}
	// ingest reads the records' ids and metadata submit wrote beside the input (ondemand reads input/ already).
	in := p.Functions.Ingest
	in.Role.AddToPrincipalPolicy(allow("ReadVectorMetadata", []string{"s3:GetObject"},
		[]*string{jsii.String(*p.Data.Bucket.BucketArn() + "/" + PrefixInput + "*/" + vectors.MetadataName)}, nil))
	suppressWildcards(in.Role, wildVectorMetadata)
	p.NightlyReport.Role.AddToPrincipalPolicy(allow("SyncCorpusIndexes",
		[]string{"s3vectors:CreateIndex", "s3vectors:DeleteVectors"}, []*string{indexes}, nil))
	mcp := p.Functions.MCP
	mcp.Role.AddToPrincipalPolicy(allow("ManageVectorIndexes",
		[]string{"s3vectors:CreateIndex", "s3vectors:DeleteIndex", "s3vectors:DeleteVectors", "s3vectors:QueryVectors"}, []*string{indexes}, nil))
	// Defence in depth: mcp writes catalog entries and deletes its callers' own,
	// but never drops or searches the shared catalog index (the Allow above is
	// index/*, which includes it).
	mcp.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("NeverDropOrSearchTheCatalog"), Effect: awsiam.Effect_DENY,
		Actions: jsii.Strings("s3vectors:DeleteIndex", "s3vectors:QueryVectors"), Resources: &[]*string{catalog},
	}))
	// search_index embeds the query with the index's model: only the allowed embedding models.
	if arns := ModelArns(awscdk.Stack_Of(c), p.Settings.catalog(), embeddingModels(p.Settings)); len(arns) > 0 {
		mcp.Role.AddToPrincipalPolicy(allow("EmbedQueries", []string{"bedrock:InvokeModel"}, arns, nil))
	}
	awscdk.NewCfnOutput(awscdk.Stack_Of(c), jsii.String("VectorBucketArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("S3 Vectors bucket of the embedding indexes (submit_batch with index, search_index)"),
		Value:       bucketArn,
	})
	return v
}

// embeddingModels are the allowed models the catalog lists as embedding models.
func embeddingModels(s Settings) []string {
	var out []string
	for _, id := range s.BedrockModels {
		if m, ok := s.catalog().Lookup(id); ok && m.Task == model.TaskEmbedding {
			out = append(out, id)
		}
	}
	return out
}
