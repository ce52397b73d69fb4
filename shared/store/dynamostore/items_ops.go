package dynamostore

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// Attributes of retries, notifications, batch parameters and cost, kept apart
// like the on-demand ones.
const (
	attrParams         = "params"
	attrRetryOf        = "retryOf"
	attrRetriedBy      = "retriedBy"
	attrNotify         = "notify"
	attrNotifiedStatus = "notifiedStatus"
	attrNotifyingUntil = "notifyingUntil"
	attrWebhookSent    = "webhookSent"
	attrCost           = "cost"
	attrWarnings       = "warnings"
)

func encodeJobOps(j *job.Job, m map[string]types.AttributeValue) error {
	for _, f := range []struct {
		name string
		v    any
		set  bool
	}{
		{attrParams, j.Params, j.Params != nil},
		{attrRetryOf, j.RetryOf, j.RetryOf != ""},
		{attrRetriedBy, j.RetriedBy, len(j.RetriedBy) > 0},
		{attrNotify, j.Notify, j.Notify != nil},
		{attrNotifiedStatus, string(j.NotifiedStatus), j.NotifiedStatus != ""},
		{attrNotifyingUntil, j.NotifyingUntil, !j.NotifyingUntil.IsZero()},
		{attrWebhookSent, string(j.WebhookSent), j.WebhookSent != ""},
		{attrCost, j.Cost, j.Cost != nil && m[attrCost] == nil},
		{attrWarnings, j.Warnings, len(j.Warnings) > 0},
	} {
		if !f.set {
			continue
		}
		av, err := attributevalue.MarshalWithOptions(f.v, nestedEncOpts)
		if err != nil {
			return fmt.Errorf("encode job %s %s: %w", j.ID, f.name, err)
		}
		m[f.name] = av
	}
	return nil
}

func decodeJobOps(m map[string]types.AttributeValue, j *job.Job) error {
	var notified, webhookSent string
	for name, dst := range map[string]any{attrParams: &j.Params, attrRetryOf: &j.RetryOf, attrRetriedBy: &j.RetriedBy,
		attrNotify: &j.Notify, attrNotifiedStatus: &notified, attrNotifyingUntil: &j.NotifyingUntil, attrWarnings: &j.Warnings,
		attrWebhookSent: &webhookSent} {
		if av, ok := m[name]; ok {
			if err := attributevalue.UnmarshalWithOptions(av, dst, nestedDecOpts); err != nil {
				return fmt.Errorf("decode job %s %s: %w", j.ID, name, err)
			}
		}
	}
	j.NotifiedStatus, j.WebhookSent = job.Status(notified), job.Status(webhookSent)
	if av, ok := m[attrCost]; ok && j.Cost == nil {
		if err := attributevalue.UnmarshalWithOptions(av, &j.Cost, nestedDecOpts); err != nil {
			return fmt.Errorf("decode job %s cost: %w", j.ID, err)
		}
	}
	return nil
}
