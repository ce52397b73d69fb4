package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

func linkSignerSecretID(t *testing.T, tpl obj) string {
	t.Helper()
	id, _ := oneResource(t, tpl, "AWS::SecretsManager::Secret", "ReportsLinkSignerSecret")
	return id
}

// TestLinkSigner: report links are signed by a user that may only read
// reports/ objects, whose access key sits in a secret nightly-report reads
// and is told of; no other role reads that secret.
func TestLinkSigner(t *testing.T) {
	tpl := fx.main.json
	dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	userID, _ := oneResource(t, tpl, "AWS::IAM::User", "ReportsLinkSigner")
	var got []statement
	for _, p := range resources(tpl, "AWS::IAM::Policy") {
		users, _ := props(p)["Users"].([]interface{})
		for _, u := range users {
			if flatten(u) == "<"+userID+">" {
				got = append(got, toStatements(props(p)["PolicyDocument"])...)
			}
		}
	}
	want := map[string][]string{"s3:GetObject": {"<" + dataID + ".Arn>/reports/*"}}
	if ar := actionResources(got); !reflect.DeepEqual(ar, want) {
		t.Errorf("link signer may %v, want %v", ar, want)
	}
	secretID := linkSignerSecretID(t, tpl)
	_, fn := oneResource(t, tpl, "AWS::Lambda::Function", "ReportsNightlyReportFunction")
	env := props(fn)["Environment"].(obj)["Variables"].(obj)
	if v := flatten(env[config.EnvLinkSigner]); v != "<"+secretID+">" {
		t.Errorf("nightly-report %s = %s, want the link signer secret", config.EnvLinkSigner, v)
	}
	for id := range resources(tpl, "AWS::IAM::Role") {
		for _, r := range actionResources(roleStatements(t, tpl, id))["secretsmanager:GetSecretValue"] {
			if r == "<"+secretID+">" && !strings.HasPrefix(id, "ReportsNightlyReport") {
				t.Errorf("role %s reads the link signer secret", id)
			}
		}
	}
}
