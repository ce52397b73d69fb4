// Command nightly-report runs the report pipelines: on an EventBridge Scheduler
// tick (or "Pipeline Run Requested") it submits the day's job; on "Job Completed"
// for a pipeline job it renders the report to S3 and notifies the SNS topic, and
// for a job that asked for it (notify) it sends the completion webhook / SNS message.
package main

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/app/announceapp"
	"github.com/mcpbatch/mcpbatch/shared/app/awsreports"
	"github.com/mcpbatch/mcpbatch/shared/app/vectorsapp"
	"github.com/mcpbatch/mcpbatch/shared/handler"
)

func main() {
	ctx := context.Background()
	vw := &vectorsapp.Wiring{}
	a, err := app.FromEnv(ctx, vw.Option)
	app.Must("init", err)
	r, err := awsreports.Reports(ctx, a)
	if err == nil && r == nil {
		err = errors.New("no pipelines file beside the bootstrap (set MCPBATCH_PIPELINES_FILE or deploy pipelines.json)")
	}
	app.Must("init report pipelines", err)
	if vw.Index != nil {
		r.Vectors = vw.Index // corpus pipelines delete the vectors of deleted documents
	}
	ann, err := announceapp.Deliverer(ctx, a)
	app.Must("init notifications", err)
	h := &handler.NightlyReport{Runner: r, Log: a.Log, Announce: ann}
	lambda.Start(app.Fresh(a.Facts, h.Handle))
}
