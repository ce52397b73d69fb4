package batch

import (
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
)

// apisOf are the APIs a job of provider may send its records through: a
// Bedrock job's records run in batch, or on demand (mode, deadline
// re-drive); an Anthropic job's in Message Batches.
func apisOf(provider string) [][2]string {
	switch provider {
	case job.ProviderAnthropic:
		return [][2]string{{model.APIAnthropicBatch, "Anthropic Message Batches"}}
	case job.ProviderBedrock:
		return [][2]string{{model.APIBedrockConverseBatch, "Amazon Bedrock batch inference (Converse)"}, {model.APIBedrockConverse, "Amazon Bedrock Converse"}}
	}
	return nil
}

// checkOutputSchema refuses an output schema the job cannot have: on an
// embedding model, or one a native constraint the job's records may go
// through refuses (named with the schema path), before anything is stored.
func checkOutputSchema(req *SubmitRequest, m *model.Model) error {
	if req.Params.OutputSchema == "" {
		return nil
	}
	if m.Task == model.TaskEmbedding {
		return job.Fieldf(outschema.FieldSchema, "applies to text models; %s is an embedding model (its outputs are vectors)", m.ID)
	}
	s, err := outschema.For(req.Params.OutputSchema)
	if err != nil {
		return err
	}
	for _, api := range apisOf(req.Provider) {
		if d, ok := model.NativeOutput(m, api[0]); ok {
			if err := s.CheckDialect(fmt.Sprintf("%s for %s", api[1], m.ID), d); err != nil {
				return err
			}
		}
	}
	for i, r := range req.Records {
		if len(r.ModelInput) > 0 {
			return outschema.ModelInputRefused(fmt.Sprintf("records[%d].model_input", i))
		}
	}
	return nil
}
