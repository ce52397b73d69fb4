// Package bedrockaccount reads the account's Bedrock model facts (models,
// inference profiles, access, batch quotas) for the daily refresh. It lives
// apart from package bedrock so that only the function that refreshes them
// (the reconciler) links the Service Quotas client.
package bedrockaccount

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/servicequotas"

	"github.com/mcpbatch/mcpbatch/shared/model"
)

// ModelsAPI is the part of the Bedrock control plane the account refresh reads.
type ModelsAPI interface {
	ListFoundationModels(ctx context.Context, in *sdk.ListFoundationModelsInput, optFns ...func(*sdk.Options)) (*sdk.ListFoundationModelsOutput, error)
	ListInferenceProfiles(ctx context.Context, in *sdk.ListInferenceProfilesInput, optFns ...func(*sdk.Options)) (*sdk.ListInferenceProfilesOutput, error)
	GetFoundationModelAvailability(ctx context.Context, in *sdk.GetFoundationModelAvailabilityInput, optFns ...func(*sdk.Options)) (*sdk.GetFoundationModelAvailabilityOutput, error)
}

// QuotasAPI is the Service Quotas call the account refresh makes.
type QuotasAPI interface {
	ListServiceQuotas(ctx context.Context, in *servicequotas.ListServiceQuotasInput, optFns ...func(*servicequotas.Options)) (*servicequotas.ListServiceQuotasOutput, error)
}

var (
	_ ModelsAPI = (*sdk.Client)(nil)
	_ QuotasAPI = (*servicequotas.Client)(nil)
)

// DefaultAvailabilityConcurrency bounds the GetFoundationModelAvailability
// calls in flight (one per model; the control plane throttles bursts).
const DefaultAvailabilityConcurrency = 8

// AccountReader reads the account's model facts from Bedrock and Service
// Quotas. A read that fails (a denied permission, a throttle past the SDK's
// retries) leaves its facts unknown and is named in Account.Gaps; only a
// failed ListFoundationModels fails the read.
type AccountReader struct {
	Models ModelsAPI
	// Quotas may be nil: the quotas stay unknown.
	Quotas      QuotasAPI
	Concurrency int
}

// Read fills a's Bedrock models, profiles and gaps.
func (r *AccountReader) Read(ctx context.Context, a *model.Account) error {
	out, err := r.Models.ListFoundationModels(ctx, &sdk.ListFoundationModelsInput{})
	if err != nil {
		return fmt.Errorf("bedrock ListFoundationModels: %w", err)
	}
	var others []model.AccountModel // image and video generators: their quotas are theirs, not unmatched
	for _, s := range out.ModelSummaries {
		m := model.AccountModel{
			ID: aws.ToString(s.ModelId), Name: aws.ToString(s.ModelName), Provider: aws.ToString(s.ProviderName),
			Input: strs(s.InputModalities), Output: strs(s.OutputModalities), InferenceTypes: strs(s.InferenceTypesSupported),
			Access: model.AccessUnknown,
		}
		// Text and embeddings are what the suite runs; image and video
		// generators are left out of the snapshot.
		if !slices.Contains(m.Output, "TEXT") && !slices.Contains(m.Output, "EMBEDDING") {
			others = append(others, m)
			continue
		}
		if lc := s.ModelLifecycle; lc != nil {
			m.Lifecycle = string(lc.Status)
			m.LegacySince, m.EndOfLife, m.ExtendedAccess = model.Day(lc.LegacyTime), model.Day(lc.EndOfLifeTime), model.Day(lc.PublicExtendedAccessTime)
		}
		a.Bedrock = append(a.Bedrock, m)
	}
	byID := func(x, y model.AccountModel) int { return strings.Compare(x.ID, y.ID) }
	slices.SortFunc(a.Bedrock, byID)
	slices.SortFunc(others, byID)
	if err := r.readProfiles(ctx, a); err != nil {
		a.Gaps = append(a.Gaps, model.GapProfiles+": "+err.Error())
	}
	if err := r.readAvailability(ctx, a); err != nil {
		a.Gaps = append(a.Gaps, model.GapAvailability+": "+err.Error())
	}
	if r.Quotas != nil {
		if err := r.readQuotas(ctx, a, others); err != nil {
			a.Gaps = append(a.Gaps, model.GapQuotas+": "+err.Error())
		}
	} else {
		a.Gaps = append(a.Gaps, model.GapQuotas+": not configured")
	}
	return nil
}

// strs turns a slice of SDK enum values into strings: values the enum does
// not declare (INFERENCE_PROFILE in older SDKs) come through as sent.
func strs[T ~string](in []T) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}

func (r *AccountReader) readProfiles(ctx context.Context, a *model.Account) error {
	var token *string
	for {
		out, err := r.Models.ListInferenceProfiles(ctx, &sdk.ListInferenceProfilesInput{MaxResults: aws.Int32(1000), NextToken: token})
		if err != nil {
			return err
		}
		for _, p := range out.InferenceProfileSummaries {
			ap := model.AccountProfile{ID: aws.ToString(p.InferenceProfileId), ARN: aws.ToString(p.InferenceProfileArn),
				Name: aws.ToString(p.InferenceProfileName), Type: string(p.Type), Status: string(p.Status)}
			for _, pm := range p.Models {
				if id := modelIDOfARN(aws.ToString(pm.ModelArn)); id != "" && !slices.Contains(ap.Models, id) {
					ap.Models = append(ap.Models, id)
				}
			}
			a.Profiles = append(a.Profiles, ap)
		}
		if out.NextToken == nil || *out.NextToken == "" {
			return nil
		}
		token = out.NextToken
	}
}

// modelIDOfARN is the model id of arn:<partition>:bedrock:<region>::foundation-model/<id>.
func modelIDOfARN(arn string) string {
	_, id, ok := strings.Cut(arn, ":foundation-model/")
	if !ok {
		return ""
	}
	return id
}

// readAvailability asks GetFoundationModelAvailability for every model, a few
// at a time. The first error is returned (its model stays unknown).
func (r *AccountReader) readAvailability(ctx context.Context, a *model.Account) error {
	n := r.Concurrency
	if n <= 0 {
		n = DefaultAvailabilityConcurrency
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range a.Bedrock {
		m := &a.Bedrock[i]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out, err := r.Models.GetFoundationModelAvailability(ctx, &sdk.GetFoundationModelAvailabilityInput{ModelId: aws.String(m.ID)})
			if err != nil {
				mu.Lock()
				first = cmpOr(first, fmt.Errorf("%s: %w", m.ID, err))
				mu.Unlock()
				return
			}
			m.Access, m.AccessDetail = accessOf(out)
		}()
	}
	wg.Wait()
	return first
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// accessOf decides access from the availability statuses: the model must be
// authorized (IAM and organization policies), its agreement accepted
// (AVAILABLE), and it must be offered in the Region and entitled.
func accessOf(out *sdk.GetFoundationModelAvailabilityOutput) (string, string) {
	agreement := ""
	if out.AgreementAvailability != nil {
		agreement = string(out.AgreementAvailability.Status)
	}
	detail := fmt.Sprintf("authorization %s, agreement %s, entitlement %s, region %s",
		out.AuthorizationStatus, agreement, out.EntitlementAvailability, out.RegionAvailability)
	granted := string(out.AuthorizationStatus) == "AUTHORIZED" && agreement == "AVAILABLE" &&
		string(out.EntitlementAvailability) != "NOT_AVAILABLE" && string(out.RegionAvailability) != "NOT_AVAILABLE"
	if granted {
		return model.AccessGranted, detail
	}
	return model.AccessDenied, detail
}

// readQuotas reads the "bedrock" quotas and keeps the batch quotas and
// on-demand rates per model. The model names are matched over every listed
// model (model.QuotaMatcher), image generators too, whose quotas are then
// dropped; names no model takes are kept in a.UnmatchedQuotas for the
// refresh report. A context-length variant's rates ("… 1M Context Length")
// govern only its long requests, so they do not become the model's rates.
func (r *AccountReader) readQuotas(ctx context.Context, a *model.Account, others []model.AccountModel) error {
	all := append(slices.Clone(a.Bedrock), others...)
	match := model.NewQuotaMatcher(all)
	missed := map[string]*model.QuotaMiss{}
	var token *string
	for {
		out, err := r.Quotas.ListServiceQuotas(ctx, &servicequotas.ListServiceQuotasInput{ServiceCode: aws.String("bedrock"), MaxResults: aws.Int32(100), NextToken: token})
		if err != nil {
			return err
		}
		for _, q := range out.Quotas {
			kind, name, ok := model.ParseQuotaName(aws.ToString(q.QuotaName))
			if !ok || q.Value == nil {
				continue
			}
			hit := match.Match(name)
			switch {
			case hit.Index < 0:
				if missed[name] == nil {
					missed[name] = &model.QuotaMiss{Name: name, Reason: hit.Reason}
				}
				missed[name].Quotas++
				continue
			case hit.Index >= len(a.Bedrock), hit.Variant != "" && strings.HasSuffix(kind, "_per_minute"):
				continue
			}
			m := &a.Bedrock[hit.Index]
			if m.Quotas == nil {
				m.Quotas = &model.Quotas{}
			}
			m.Quotas.SetQuota(kind, *q.Value)
		}
		if out.NextToken == nil || *out.NextToken == "" {
			break
		}
		token = out.NextToken
	}
	for _, m := range missed {
		a.UnmatchedQuotas = append(a.UnmatchedQuotas, *m)
	}
	slices.SortFunc(a.UnmatchedQuotas, func(x, y model.QuotaMiss) int { return strings.Compare(x.Name, y.Name) })
	return nil
}
