package main

import (
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/index"
)

// TestVectorDefenceInDepth: the mcp role may never drop or search the shared
// catalog index, whatever its Allow statements say (an explicit Deny); the
// vector bucket outlives a stack deletion instead of failing it (a bucket
// holding indexes cannot be deleted); the Bedrock service role lists only
// the input and output prefixes.
func TestVectorDefenceInDepth(t *testing.T) {
	tpl := fx.main.json
	mcpRole, _ := oneResource(t, tpl, "AWS::IAM::Role", "FunctionsMcpRole")
	denied := map[string]bool{}
	for _, pol := range rolePolicies(tpl, mcpRole) {
		for _, s := range props(pol)["PolicyDocument"].(obj)["Statement"].([]interface{}) {
			st := s.(obj)
			if st["Effect"] != "Deny" || !strings.HasSuffix(flatten(st["Resource"]), "/index/"+index.CatalogIndex) {
				continue
			}
			for _, a := range strs(st["Action"]) {
				denied[a] = true
			}
		}
	}
	for _, a := range []string{"s3vectors:DeleteIndex", "s3vectors:QueryVectors"} {
		if !denied[a] {
			t.Errorf("mcp role: no explicit Deny of %s on the %s index (denied: %v)", a, index.CatalogIndex, denied)
		}
	}
	_, b := oneResource(t, tpl, "AWS::S3Vectors::VectorBucket", "VectorsBucket")
	if b["DeletionPolicy"] != "Retain" || b["UpdateReplacePolicy"] != "Retain" {
		t.Errorf("vector bucket policies %v/%v, want Retain (a bucket with indexes fails deletion)", b["DeletionPolicy"], b["UpdateReplacePolicy"])
	}
	for _, s := range roleStatements(t, tpl, bedrockRoleID(t, tpl)) {
		for _, a := range s.Actions {
			if a == "s3:ListBucket" && !strings.Contains(flatten(s.Condition), "s3:prefix") {
				t.Errorf("Bedrock service role lists the bucket without an s3:prefix condition: %v", s.Condition)
			}
		}
	}
}
