package dynamostore

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// jobItem is a job item of the layout before 2026-12 (one attribute per
// field, Parts and Checkpoint as nested maps beside it), read so that jobs
// stored then stay readable until they expire.
type jobItem struct {
	PK     string `dynamodbav:"PK"`
	SK     string `dynamodbav:"SK"`
	GSI1PK string `dynamodbav:"GSI1PK"`
	GSI1SK string `dynamodbav:"GSI1SK"`
	// Sparse index keys: absent once the job is terminal, so it leaves GSI2.
	GSI2PK    string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK    string `dynamodbav:"GSI2SK,omitempty"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`

	ID                   string `dynamodbav:"id"`
	Owner                string `dynamodbav:"owner"`
	Name                 string `dynamodbav:"name,omitempty"`
	Provider             string `dynamodbav:"provider"`
	Model                string `dynamodbav:"model,omitempty"`
	Status               string `dynamodbav:"status"`
	ProviderStatus       string `dynamodbav:"providerStatus,omitempty"`
	FinalStatus          string `dynamodbav:"finalStatus,omitempty"`
	InputURI             string `dynamodbav:"inputUri,omitempty"`
	OutputURI            string `dynamodbav:"outputUri,omitempty"`
	FailureURI           string `dynamodbav:"failureUri,omitempty"`
	RecordCount          int    `dynamodbav:"recordCount"`
	Succeeded            int    `dynamodbav:"succeeded"`
	Failed               int    `dynamodbav:"failed"`
	BadLines             int    `dynamodbav:"badLines"`
	InputTokens          int64  `dynamodbav:"inputTokens"`
	OutputTokens         int64  `dynamodbav:"outputTokens"`
	Shards               int    `dynamodbav:"shards"`
	Error                string `dynamodbav:"error,omitempty"`
	OutputReadyPublished bool   `dynamodbav:"outputReadyPublished,omitempty"`
	TTLDays              int    `dynamodbav:"ttlDays"`
	CreatedAt            string `dynamodbav:"createdAt"`
	UpdatedAt            string `dynamodbav:"updatedAt"`
	SubmittedAt          string `dynamodbav:"submittedAt,omitempty"`
	CompletedAt          string `dynamodbav:"completedAt,omitempty"`
	LastEventAt          string `dynamodbav:"lastEventAt,omitempty"`
	Version              int64  `dynamodbav:"version"`
}

// nestedOpts encode job.Part and job.Checkpoint by their json tags, so the
// nested maps use the same camelCase names as the API and stay in step when
// the domain types gain fields.
func nestedDecOpts(o *attributevalue.DecoderOptions) { o.TagKey = "json" }

// Attributes of on-demand runs and report pipelines, kept apart from the
// batch spine's jobItem so the two grow independently.
const (
	attrMode       = "mode"
	attrCacheRead  = "cacheReadTokens"
	attrCacheWrite = "cacheWriteTokens"
	attrOnDemand   = "onDemand"
	attrPipeline   = "pipeline"
	attrBudget     = "budgetUsd"
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

// reliabilityItem holds the job attributes of retention, stalled-job retries,
// output line caps and record keys, as real attributes beside jobItem's.
type reliabilityItem struct {
	RecordsExpireAt   string `dynamodbav:"recordsExpireAt,omitempty"`
	Retries           int    `dynamodbav:"retries,omitempty"`
	LastError         string `dynamodbav:"lastError,omitempty"`
	MaxInputLineBytes int    `dynamodbav:"maxInputLineBytes,omitempty"`
	InputOrder        bool   `dynamodbav:"inputOrder,omitempty"`
	KeptOrdinals      bool   `dynamodbav:"keptOrdinals,omitempty"`
}

func decodeLegacyJob(m map[string]types.AttributeValue) (*job.Job, error) {
	var it jobItem
	if err := attributevalue.UnmarshalMap(m, &it); err != nil {
		return nil, fmt.Errorf("decode job item: %w", err)
	}
	j := &job.Job{
		ID:                   it.ID,
		Owner:                it.Owner,
		Name:                 it.Name,
		Provider:             it.Provider,
		Model:                it.Model,
		Status:               job.Status(it.Status),
		ProviderStatus:       it.ProviderStatus,
		FinalStatus:          job.Status(it.FinalStatus),
		InputURI:             it.InputURI,
		OutputURI:            it.OutputURI,
		FailureURI:           it.FailureURI,
		RecordCount:          it.RecordCount,
		Succeeded:            it.Succeeded,
		Failed:               it.Failed,
		BadLines:             it.BadLines,
		InputTokens:          it.InputTokens,
		OutputTokens:         it.OutputTokens,
		Shards:               it.Shards,
		Error:                it.Error,
		OutputReadyPublished: it.OutputReadyPublished,
		TTLDays:              it.TTLDays,
		ExpiresAt:            storeutil.FromExpiresUnix(it.ExpiresAt),
		Version:              it.Version,
	}
	var err error
	for _, f := range []struct {
		dst *time.Time
		src string
	}{
		{&j.CreatedAt, it.CreatedAt}, {&j.UpdatedAt, it.UpdatedAt}, {&j.SubmittedAt, it.SubmittedAt},
		{&j.CompletedAt, it.CompletedAt}, {&j.LastEventAt, it.LastEventAt},
	} {
		if *f.dst, err = parseTime(f.src); err != nil {
			return nil, fmt.Errorf("decode job %s: %w", it.ID, err)
		}
	}
	if av, ok := m[attrParts]; ok {
		if err := attributevalue.UnmarshalWithOptions(av, &j.Parts, nestedDecOpts); err != nil {
			return nil, fmt.Errorf("decode job %s parts: %w", it.ID, err)
		}
	}
	if av, ok := m[attrCheckpoint]; ok {
		if err := attributevalue.UnmarshalWithOptions(av, &j.Checkpoint, nestedDecOpts); err != nil {
			return nil, fmt.Errorf("decode job %s checkpoint: %w", it.ID, err)
		}
	}
	if err := decodeJobExtra(m, j); err != nil {
		return nil, err
	}
	if err := decodeReliability(m, j); err != nil {
		return nil, err
	}
	return j, nil
}

// decodeJobExtra reads what encodeJobExtra wrote.
func decodeJobExtra(m map[string]types.AttributeValue, j *job.Job) error {
	dst := map[string]any{attrMode: &j.Mode, attrCacheRead: &j.CacheReadTokens, attrCacheWrite: &j.CacheWriteTokens, attrBudget: &j.BudgetUSD}
	for name, p := range dst {
		if av, ok := m[name]; ok {
			if err := attributevalue.Unmarshal(av, p); err != nil {
				return fmt.Errorf("decode job %s %s: %w", j.ID, name, err)
			}
		}
	}
	if av, ok := m[attrOnDemand]; ok {
		if err := attributevalue.UnmarshalWithOptions(av, &j.OnDemand, nestedDecOpts); err != nil {
			return fmt.Errorf("decode job %s onDemand: %w", j.ID, err)
		}
	}
	if av, ok := m[attrPipeline]; ok {
		if err := attributevalue.UnmarshalWithOptions(av, &j.Pipeline, nestedDecOpts); err != nil {
			return fmt.Errorf("decode job %s pipeline: %w", j.ID, err)
		}
	}
	return decodeJobOps(m, j)
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

func decodeReliability(m map[string]types.AttributeValue, j *job.Job) error {
	var it reliabilityItem
	if err := attributevalue.UnmarshalMap(m, &it); err != nil {
		return fmt.Errorf("decode job %s: %w", j.ID, err)
	}
	t, err := parseTime(it.RecordsExpireAt)
	if err != nil {
		return fmt.Errorf("decode job %s: %w", j.ID, err)
	}
	j.RecordsExpireAt, j.Retries, j.LastError, j.MaxInputLineBytes = t, it.Retries, it.LastError, it.MaxInputLineBytes
	j.InputOrder, j.KeptOrdinals = it.InputOrder, it.KeptOrdinals
	return nil
}
