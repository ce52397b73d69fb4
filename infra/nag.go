package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// cdk-nag (AwsSolutions) suppressions. Each one names the exact finding it covers
// (appliesTo) and why it is acceptable; nothing is suppressed stack-wide.

// A wildcard finding and the reason it is the narrowest possible grant.
type wildcard struct {
	pattern string // regular expression over cdk-nag's flattened finding id
	reason  string
}

var (
	wildObjects = wildcard{
		pattern: `/^Resource::<[A-Za-z0-9]+\.Arn>\/(input|output|results|exports|uploads|inputs|cache)\/\*$/`,
		reason: "S3 object keys embed job ids (or, under cache/, record-content hashes) created at run time, so objects cannot be listed in advance; " +
			"the grant is limited to one named key prefix of this stack's own data bucket.",
	}
	wildJobObjects = wildcard{
		pattern: `/^Resource::<[A-Za-z0-9]+\.Arn>\/jobs\/\*$/`,
		reason: "The job store keeps a job too large for a DynamoDB item under jobs/<job id>/<version>; job " +
			"ids are created at run time, and the grant is limited to that one prefix of this stack's data bucket.",
	}
	wildRecordIDs = wildcard{
		pattern: `/^Resource::<[A-Za-z0-9]+\.Arn>\/input\/\*\/(ids\.jsonl|ids\.txt|inputs\.jsonl|ordinals\.jsonl|redrive\/records\.jsonl|redrive\/records\.ordinals\.jsonl)$/`,
		reason: "ingest reads only the record-id list (input/<job id>/ids.jsonl, ids.txt of older jobs), a retry's " +
			"kept input ordinals (ordinals.jsonl) and, for a deadline re-drive, the caller's records (inputs.jsonl) " +
			"each submit writes, and writes only the re-drive's input and its ordinals (redrive/records.jsonl, " +
			"redrive/records.ordinals.jsonl); job ids are created at run time, and the grant names the files.",
	}
	wildJobs = wildcard{
		// Region and account are literals with a pinned env, <AWS::Region>/<AWS::AccountId> without.
		pattern: `/^Resource::arn:<AWS::Partition>:bedrock:(<AWS::Region>|[a-z0-9-]+):(<AWS::AccountId>|[0-9]{12}):model-invocation-job\/\*$/`,
		reason: "Bedrock batch job ARNs end in an id Bedrock assigns at creation (not our jobName), so they " +
			"cannot be named in advance; the pattern is limited to batch jobs in this account and region.",
	}
	wildModelRegions = wildcard{
		pattern: `/^Resource::arn:<AWS::Partition>:bedrock:\*::foundation-model\/[A-Za-z0-9.:_-]+$/`,
		reason: "A cross-region inference profile routes each request to the base model in any region of its " +
			"geography, so the foundation-model ARN needs a region wildcard; the model id itself is pinned " +
			"to the allowed list (bedrockModels).",
	}
	wildListJobs = wildcard{
		pattern: `/^Resource::\*$/`,
		reason: "bedrock:ListModelInvocationJobs has no resource type in the IAM service authorization " +
			"reference and only accepts Resource \"*\"; it returns job metadata, not data.",
	}
)

func suppressWildcards(c constructs.IConstruct, ws ...wildcard) {
	s := make([]*cdknag.NagPackSuppression, 0, len(ws))
	for _, w := range ws {
		s = append(s, &cdknag.NagPackSuppression{
			Id:        jsii.String("AwsSolutions-IAM5"),
			Reason:    jsii.String(w.reason),
			AppliesTo: &[]interface{}{&cdknag.RegexAppliesTo{Regex: jsii.String(w.pattern)}},
		})
	}
	// applyToChildren: the findings sit on the role's DefaultPolicy, a child of the role.
	cdknag.NagSuppressions_AddResourceSuppressions(c, &s, jsii.Bool(true))
}

func suppress(c constructs.IConstruct, id, reason string) {
	cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{
		{Id: jsii.String(id), Reason: jsii.String(reason)},
	}, jsii.Bool(true))
}

// addNagSuppressions records the accepted findings of the stack.
func (s *Stack) addNagSuppressions() {
	suppressWildcards(s.Bedrock.Role, wildObjects, wildModelRegions)
	suppressWildcards(s.Functions.MCP.Role, wildObjects, wildJobs, wildModelRegions, wildListJobs)
	suppressWildcards(s.Functions.BedrockEvents.Role, wildJobs)
	suppressWildcards(s.Functions.Ingest.Role, wildObjects, wildRecordIDs)

	suppress(s.Data.AccessLogs, "AwsSolutions-S1",
		"This is the server-access-log target of the data bucket; logging it to itself would loop and "+
			"logging it elsewhere only moves the question to another bucket.")
	for _, g := range []*GoFunction{s.Functions.BedrockEvents, s.Functions.Ingest} {
		suppress(g.DLQ, "AwsSolutions-SQS3",
			"This queue is itself the dead-letter queue of the "+g.Name+
				" function (EventBridge target DLQ and Lambda onFailure destination); a DLQ of a DLQ adds nothing.")
	}
}

// CheckWithNag runs the AwsSolutions pack over scope at synth time; findings become
// error/warning annotations, which fail `cdk synth`/`cdk deploy` when unsuppressed errors remain.
func CheckWithNag(scope constructs.IConstruct, reports bool) {
	awscdk.Aspects_Of(scope).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{
		Verbose: jsii.Bool(true),
		Reports: jsii.Bool(reports),
	}), nil)
}
