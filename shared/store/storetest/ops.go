package storetest

import (
	"reflect"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// testOpsFieldsRoundTrip: batch parameters, retry links, notification
// settings, cost, warnings, a part's invocation type and a retry's record
// keying survive a write and an update.
func testOpsFieldsRoundTrip(e *env) {
	j := e.newJob("o", job.ProviderBedrock, job.StatusCompleted, e.clock.Now())
	temp := 0.5
	j.Params = &job.Params{System: "sys", MaxTokens: 300, Temperature: &temp}
	j.RetryOf = job.NewID(e.clock.Now())
	j.InputOrder, j.KeptOrdinals = true, true
	j.Notify = &job.Notify{Webhook: "https://hooks.example.com/mcpbatch?k=1", SNS: true}
	j.Cost = &job.Cost{InputUSD: 0.5, OutputUSD: 1.25, TotalUSD: 1.75, Basis: "batch", PricesAsOf: "2026-11-01"}
	j.Warnings = []string{"model m takes no system prompt: the system prompt was sent as the first text of the first user turn"}
	j.Parts = []job.Part{{Index: 0, Name: "p0", Status: job.StatusCompleted, InvocationType: "Converse"}}
	if err := e.s.CreateJob(e.ctx, j); err != nil {
		e.t.Fatal(err)
	}
	child := job.NewID(e.clock.Now())
	if _, err := e.s.UpdateJob(e.ctx, j.ID, func(j *job.Job) error {
		j.RetriedBy = append(j.RetriedBy, child)
		j.NotifiedStatus = job.StatusCompleted
		j.NotifyingUntil = e.clock.Now().Add(time.Minute)
		j.WebhookSent = job.StatusCompleted
		return nil
	}); err != nil {
		e.t.Fatal(err)
	}
	got, err := e.s.GetJob(e.ctx, j.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Params, j.Params) || got.RetryOf != j.RetryOf || !reflect.DeepEqual(got.RetriedBy, []string{child}) ||
		!reflect.DeepEqual(got.Notify, j.Notify) || got.NotifiedStatus != job.StatusCompleted ||
		!got.NotifyingUntil.Equal(e.clock.Now().Add(time.Minute)) || !reflect.DeepEqual(got.Cost, j.Cost) ||
		!reflect.DeepEqual(got.Warnings, j.Warnings) || len(got.Parts) != 1 || got.Parts[0].InvocationType != "Converse" ||
		!got.InputOrder || !got.KeptOrdinals || got.WebhookSent != job.StatusCompleted {
		e.t.Fatalf("round trip:\n got params %+v retryOf %q retriedBy %q notify %+v notified %q/%q cost %+v warnings %q parts %+v keying %v/%v\nwant %+v %q [%s] %+v completed/completed %+v %q %+v true/true",
			got.Params, got.RetryOf, got.RetriedBy, got.Notify, got.NotifiedStatus, got.WebhookSent, got.Cost, got.Warnings, got.Parts, got.InputOrder, got.KeptOrdinals,
			j.Params, j.RetryOf, child, j.Notify, j.Cost, j.Warnings, j.Parts)
	}
}
