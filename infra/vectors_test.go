package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/vectorsapp"
	"github.com/mcpbatch/mcpbatch/shared/index"
)

// vectorGrants adds what vectors.go grants function fn (FunctionsMcp,
// FunctionsIngest, ReportsOnDemand) to a least-privilege expectation.
func vectorGrants(t *testing.T, tpl obj, fn string, m map[string][]string, models []string) {
	t.Helper()
	id, _ := oneResource(t, tpl, "AWS::S3Vectors::VectorBucket", "VectorsBucket")
	arn := "<" + id + ".VectorBucketArn>"
	indexes, catalog := arn+"/index/*", arn+"/index/"+index.CatalogIndex
	for _, a := range []string{"s3vectors:GetIndex", "s3vectors:GetVectors", "s3vectors:PutVectors", "s3vectors:ListVectors"} {
		m[a] = []string{indexes}
	}
	m["s3vectors:CreateIndex"] = []string{catalog}
	switch fn {
	case "FunctionsMcp":
		m["s3vectors:CreateIndex"] = sortedStrings(catalog, indexes)
		for _, a := range []string{"s3vectors:DeleteIndex", "s3vectors:DeleteVectors", "s3vectors:QueryVectors"} {
			m[a] = []string{indexes}
		}
		if len(models) > 0 {
			m["bedrock:InvokeModel"] = sortedStrings(models...)
		}
	case "ReportsNightlyReport":
		m["s3vectors:CreateIndex"] = sortedStrings(catalog, indexes)
		m["s3vectors:DeleteVectors"] = []string{indexes}
	case "FunctionsIngest":
		dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
		m["s3:GetObject"] = sortedStrings(append(m["s3:GetObject"], "<"+dataID+".Arn>/input/*/index-metadata.jsonl")...)
	}
}

func sortedStrings(s ...string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func TestVectorBucket(t *testing.T) {
	tpl := fx.main.json
	id, b := oneResource(t, tpl, "AWS::S3Vectors::VectorBucket", "VectorsBucket")
	if n, ok := props(b)["VectorBucketName"]; ok {
		t.Errorf("fixed bucket name %v: let CloudFormation name it (unique per account and region)", n)
	}
	for _, fn := range []string{"FunctionsMcpFunction", "FunctionsIngestFunction", "ReportsOnDemandFunction", "ReportsNightlyReportFunction"} {
		_, f := oneResource(t, tpl, "AWS::Lambda::Function", fn)
		env := props(f)["Environment"].(obj)["Variables"].(obj)
		if got := flatten(env[vectorsapp.EnvVectorBucket]); got != "<"+id+".VectorBucketArn>" {
			t.Errorf("%s: %s = %s", fn, vectorsapp.EnvVectorBucket, got)
		}
	}
	if _, ok := tpl["Outputs"].(obj)["VectorBucketArn"]; !ok {
		t.Error("output VectorBucketArn missing")
	}
	// No role may create vector buckets: the stack owns the one bucket.
	for rid := range resources(tpl, "AWS::IAM::Role") {
		for _, s := range roleStatements(t, tpl, rid) {
			for _, a := range s.Actions {
				if strings.HasPrefix(a, "s3vectors:") && strings.Contains(a, "Bucket") {
					t.Errorf("%s: %s", rid, a)
				}
			}
		}
	}
}
