package main

import (
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// The validate function reads input files, writes provider inputs, moves the
// job and submits it: those actions on those resources, nothing else.
func TestValidateLeastPrivilege(t *testing.T) {
	tpl := fx.main.json
	tableID, _ := oneResource(t, tpl, "AWS::DynamoDB::Table", "DataTable")
	dataID, _ := oneResource(t, tpl, "AWS::S3::Bucket", "DataBucket")
	busID, _ := oneResource(t, tpl, "AWS::Events::EventBus", "Bus")
	roleID, _ := oneResource(t, tpl, "AWS::IAM::Role", "ValidateRole")
	dlq, _ := oneResource(t, tpl, "AWS::SQS::Queue", "ValidateDLQ")
	logs, _ := oneResource(t, tpl, "AWS::Logs::LogGroup", "ValidateLogs")
	table := "<" + tableID + ".Arn>"
	create := append([]string{jobArns}, expectedModelArns(config.DefaultBedrockModels)...)
	sort.Strings(create)
	bucket := "<" + dataID + ".Arn>"
	want := map[string][]string{
		"events:PutEvents":                 {"<" + busID + ".Arn>"},
		"s3:GetObject":                     {bucket + "/input/*", bucket + "/inputs/*", bucket + "/uploads/*"},
		"s3:ListBucket":                    {bucket},
		"s3:PutObject":                     {bucket + "/input/*"},
		"s3:AbortMultipartUpload":          {bucket + "/input/*"},
		"bedrock:CreateModelInvocationJob": create,
		"bedrock:TagResource":              {jobArns},
		"iam:PassRole":                     {"<" + bedrockRoleID(t, tpl) + ".Arn>"},
		"secretsmanager:GetSecretValue":    {anthropicSecret(t, tpl)},
		"logs:CreateLogStream":             {"<" + logs + ".Arn>"},
		"logs:PutLogEvents":                {"<" + logs + ".Arn>"},
	}
	storeGrants(want, table, "<"+dataID+".Arn>")
	for _, a := range []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"} {
		want[a] = []string{"<" + dlq + ".Arn>"}
	}
	// The validation queue: it sends units (plan, checks, shards) and its
	// event source reads them.
	queue, _ := oneResource(t, tpl, "AWS::SQS::Queue", "FanoutQueue")
	for _, a := range []string{"sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility"} {
		want[a] = append(want[a], "<"+queue+".Arn>")
		sort.Strings(want[a])
	}
	for _, st := range roleStatements(t, tpl, roleID) {
		if !slices.Contains(st.Actions, "s3:ListBucket") {
			continue
		}
		like, _ := st.Condition["StringLike"].(obj)
		prefixes := strs(like["s3:prefix"])
		sort.Strings(prefixes)
		if want := []string{"input/*", "inputs/*", "uploads/*"}; !reflect.DeepEqual(prefixes, want) {
			t.Errorf("ListBucket limited to s3:prefix %v, want %v", prefixes, want)
		}
	}
	got := actionResources(roleStatements(t, tpl, roleID))
	for a := range got {
		if _, ok := want[a]; !ok {
			t.Errorf("unexpected action %s on %v", a, got[a])
		}
	}
	for a, w := range want {
		if !reflect.DeepEqual(got[a], w) {
			t.Errorf("%s on %v, want %v", a, got[a], w)
		}
	}
}
