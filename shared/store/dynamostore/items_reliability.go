package dynamostore

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
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

func encodeReliability(j *job.Job, m map[string]types.AttributeValue) error {
	extra, err := attributevalue.MarshalMap(reliabilityItem{
		RecordsExpireAt: formatTime(j.RecordsExpireAt), Retries: j.Retries, LastError: j.LastError,
		MaxInputLineBytes: j.MaxInputLineBytes, InputOrder: j.InputOrder, KeptOrdinals: j.KeptOrdinals,
	})
	if err != nil {
		return fmt.Errorf("encode job %s: %w", j.ID, err)
	}
	for k, v := range extra {
		m[k] = v
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
