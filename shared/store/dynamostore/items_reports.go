package dynamostore

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

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

// encodeJobExtra adds the on-demand and pipeline attributes of j to m.
func encodeJobExtra(j *job.Job, m map[string]types.AttributeValue) error {
	if j.Mode != "" {
		m[attrMode] = &types.AttributeValueMemberS{Value: j.Mode}
	}
	if j.CacheReadTokens != 0 {
		m[attrCacheRead] = &types.AttributeValueMemberN{Value: fmt.Sprint(j.CacheReadTokens)}
	}
	if j.BudgetUSD != 0 {
		m[attrBudget] = &types.AttributeValueMemberN{Value: strconv.FormatFloat(j.BudgetUSD, 'g', -1, 64)}
	}
	if j.CacheWriteTokens != 0 {
		m[attrCacheWrite] = &types.AttributeValueMemberN{Value: fmt.Sprint(j.CacheWriteTokens)}
	}
	for name, v := range map[string]any{attrOnDemand: j.OnDemand, attrPipeline: j.Pipeline} {
		if v == nil || v == (*job.OnDemand)(nil) || v == (*job.PipelineRun)(nil) {
			continue
		}
		av, err := attributevalue.MarshalWithOptions(v, nestedEncOpts)
		if err != nil {
			return fmt.Errorf("encode job %s %s: %w", j.ID, name, err)
		}
		m[name] = av
	}
	return encodeJobOps(j, m)
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
