package bedrockaccount

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrock/types"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"
	sqtypes "github.com/aws/aws-sdk-go-v2/service/servicequotas/types"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

type fakeModels struct {
	ms []types.FoundationModelSummary
}

func (f fakeModels) ListFoundationModels(context.Context, *sdk.ListFoundationModelsInput, ...func(*sdk.Options)) (*sdk.ListFoundationModelsOutput, error) {
	return &sdk.ListFoundationModelsOutput{ModelSummaries: f.ms}, nil
}

func (fakeModels) ListInferenceProfiles(context.Context, *sdk.ListInferenceProfilesInput, ...func(*sdk.Options)) (*sdk.ListInferenceProfilesOutput, error) {
	return &sdk.ListInferenceProfilesOutput{}, nil
}

func (fakeModels) GetFoundationModelAvailability(_ context.Context, in *sdk.GetFoundationModelAvailabilityInput, _ ...func(*sdk.Options)) (*sdk.GetFoundationModelAvailabilityOutput, error) {
	return &sdk.GetFoundationModelAvailabilityOutput{ModelId: in.ModelId, AuthorizationStatus: types.AuthorizationStatusAuthorized}, nil
}

// fakeQuotas pages its quotas two at a time.
type fakeQuotas map[string]float64

func (f fakeQuotas) ListServiceQuotas(_ context.Context, in *servicequotas.ListServiceQuotasInput, _ ...func(*servicequotas.Options)) (*servicequotas.ListServiceQuotasOutput, error) {
	var all []sqtypes.ServiceQuota
	for _, name := range []string{ // real quota names (shared/model/testdata/quota_names.tsv)
		"Batch inference job size (in GB) for OpenAI GPT OSS 120b",
		"On-demand model inference tokens per minute for OpenAI GPT OSS 120B",
		"Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1",
		"Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1 1M Context Length",
		"Batch inference job size (in GB) for Claude 3 Opus",
		"Records per batch inference job for Claude 3 Opus",
		"On-demand model inference requests per minute for Stable Image Inpaint",
	} {
		all = append(all, sqtypes.ServiceQuota{QuotaName: aws.String(name), Value: aws.Float64(f[name])})
	}
	start := 0
	if in.NextToken != nil {
		start = int((*in.NextToken)[0] - '0')
	}
	end := min(start+2, len(all))
	out := &servicequotas.ListServiceQuotasOutput{Quotas: all[start:end]}
	if end < len(all) {
		out.NextToken = aws.String(string(rune('0' + end)))
	}
	return out, nil
}

// TestReadQuotasMatchesAndReports: quota names reach their models under
// Service Quotas' own spelling, a long-context variant's rate is not the
// model's, an image model's quotas are dropped, and a name no model takes is
// reported once with its count.
func TestReadQuotasMatchesAndReports(t *testing.T) {
	text := []types.ModelModality{types.ModelModalityText}
	sum := func(id, name, provider string, out []types.ModelModality) types.FoundationModelSummary {
		return types.FoundationModelSummary{ModelId: aws.String(id), ModelName: aws.String(name), ProviderName: aws.String(provider), OutputModalities: out}
	}
	r := &AccountReader{Models: fakeModels{ms: []types.FoundationModelSummary{
		sum("openai.gpt-oss-120b-1:0", "gpt-oss-120b", "OpenAI", text),
		sum("anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5", "Anthropic", text),
		sum("stability.stable-image-inpaint-v1:0", "Stable Image Inpaint", "Stability AI", []types.ModelModality{types.ModelModalityImage}),
	}}, Quotas: fakeQuotas{
		"Batch inference job size (in GB) for OpenAI GPT OSS 120b":                                            5,
		"On-demand model inference tokens per minute for OpenAI GPT OSS 120B":                                 100_000,
		"Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1":                   5_000_000,
		"Cross-region model inference tokens per minute for Anthropic Claude Sonnet 4.5 V1 1M Context Length": 1_000_000,
		"Batch inference job size (in GB) for Claude 3 Opus":                                                  5,
		"Records per batch inference job for Claude 3 Opus":                                                   50_000,
		"On-demand model inference requests per minute for Stable Image Inpaint":                              10,
	}}
	a := &model.Account{}
	if err := r.Read(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if len(a.Bedrock) != 2 || len(a.Gaps) > 0 {
		t.Fatalf("models %+v gaps %v", a.Bedrock, a.Gaps)
	}
	gpt, sonnet := a.Bedrock[1], a.Bedrock[0]
	if q := gpt.Quotas; q == nil || q.MaxJobBytes != 5<<30 || q.TokensPerMinute != 100_000 || !q.Batch() {
		t.Errorf("gpt-oss-120b quotas %+v", q)
	}
	if q := sonnet.Quotas; q == nil || q.TokensPerMinute != 5_000_000 || q.Batch() {
		t.Errorf("Sonnet 4.5 quotas %+v, want the 5M rate (not the 1M-context variant's 1M) and no batch quotas", q)
	}
	if len(a.UnmatchedQuotas) != 1 || a.UnmatchedQuotas[0].Name != "Claude 3 Opus" || a.UnmatchedQuotas[0].Quotas != 2 || a.UnmatchedQuotas[0].Reason == "" {
		t.Errorf("unmatched %+v, want Claude 3 Opus with its 2 quotas", a.UnmatchedQuotas)
	}
}
