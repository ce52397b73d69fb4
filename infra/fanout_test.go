package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// The validation queue: encrypted, TLS only, its units redelivered up to
// config.ValidateQueueReceives times into its own DLQ (watched by an alarm
// on the alarm topic), hidden while a unit may still run, read by the
// validate function one unit at a time at the configured concurrency with
// batch item failures, and named to it in its environment.
func TestFanoutQueue(t *testing.T) {
	tpl := fx.main.json
	qid, q := oneResource(t, tpl, "AWS::SQS::Queue", "FanoutQueue")
	dlq, d := oneResource(t, tpl, "AWS::SQS::Queue", "FanoutDLQ")
	for id, p := range map[string]obj{qid: props(q), dlq: props(d)} {
		if p["SqsManagedSseEnabled"] != true {
			t.Errorf("%s not encrypted", id)
		}
	}
	p := props(q)
	if got := flatten(p["RedrivePolicy"]); got != flatten(obj{"deadLetterTargetArn": obj{"Fn::GetAtt": []interface{}{dlq, "Arn"}}, "maxReceiveCount": float64(config.ValidateQueueReceives)}) {
		t.Errorf("RedrivePolicy = %s", got)
	}
	if p["VisibilityTimeout"] != float64(validateQueueVisibility*60) {
		t.Errorf("VisibilityTimeout = %v, want six times the function's 15 minutes", p["VisibilityTimeout"])
	}
	fnID, fn := oneResource(t, tpl, "AWS::Lambda::Function", "ValidateFunction")
	env := props(fn)["Environment"].(obj)["Variables"].(obj)
	if got := flatten(env[config.EnvValidateQueue]); got != flatten(obj{"Ref": qid}) {
		t.Errorf("validate's %s = %s, want the queue's URL", config.EnvValidateQueue, got)
	}
	maps := resources(tpl, "AWS::Lambda::EventSourceMapping")
	found := 0
	for id, m := range maps {
		mp := props(m)
		if flatten(mp["EventSourceArn"]) != flatten(obj{"Fn::GetAtt": []interface{}{qid, "Arn"}}) {
			continue
		}
		found++
		if flatten(mp["FunctionName"]) != flatten(obj{"Ref": fnID}) {
			t.Errorf("%s feeds %v, want the validate function", id, mp["FunctionName"])
		}
		if mp["BatchSize"] != float64(1) || flatten(mp["ScalingConfig"]) != flatten(obj{"MaximumConcurrency": float64(DefaultValidateConcurrency)}) ||
			flatten(mp["FunctionResponseTypes"]) != flatten([]interface{}{"ReportBatchItemFailures"}) {
			t.Errorf("%s: %v", id, mp)
		}
	}
	if found != 1 {
		t.Fatalf("%d event source mappings read the validation queue, want 1", found)
	}
	alarmed := false
	for _, a := range resources(tpl, "AWS::CloudWatch::Alarm") {
		ap := props(a)
		if ap["MetricName"] == "ApproximateNumberOfMessagesVisible" &&
			strings.Contains(flatten(ap["Dimensions"]), dlq) && len(strs(ap["AlarmActions"])) == 1 {
			alarmed = true
		}
	}
	if !alarmed {
		t.Error("no alarm (with the topic as action) on the validation queue's DLQ")
	}
}

// The concurrency is the context's, held to Lambda's range for an SQS event source.
func TestFanoutConcurrencyFromContext(t *testing.T) {
	for _, v := range []interface{}{"1", float64(1001), "many", 2.5} {
		app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{CtxValidateConcurrency: v}})
		_, err := NewFanout(app, "Fanout", &FanoutProps{})
		if err == nil || !strings.Contains(err.Error(), CtxValidateConcurrency) || !strings.Contains(err.Error(), "2..1000") {
			t.Errorf("%v: err %v, want a refusal naming %s and 2..1000", v, err, CtxValidateConcurrency)
		}
	}
}
