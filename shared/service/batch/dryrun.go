package batch

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/content"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/service"
)

// DryRunResult is what a submit would do, without doing it.
type DryRunResult struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Mode     string `json:"mode"`
	Records  int    `json:"records"`
	// Parts are the record counts of the provider jobs a batch would be split
	// into (by count and by encoded bytes; images by s3:// counted at their
	// base64 size); empty on demand.
	Parts []int `json:"provider_jobs,omitempty"`
	// EstimatedInputTokens: text at one token per 4 characters, images by the
	// providers' pixel formula, documents per page or per byte (shared/content).
	EstimatedInputTokens int64 `json:"estimated_input_tokens"`
	// MaxOutputTokens is the most the job can produce: max_tokens per
	// record, or the record's own cap in its model_input.
	MaxOutputTokens int64 `json:"max_output_tokens"`
	// Cost prices the estimated input and the maximum output at the basis the
	// mode runs at (batch or on-demand prices from the catalog).
	Cost model.Cost `json:"estimated_cost"`
	// Basis and Tier name the prices Cost is at: batch, or on_demand at a
	// service tier (standard where none was chosen or the model has no other).
	Basis model.Basis `json:"priced_basis,omitempty"`
	Tier  string      `json:"priced_tier,omitempty"`
	// Counted is the input counted exactly on a random sample of records
	// and extrapolated with an interval (nil: no counter for this model).
	Counted *TokenCount `json:"counted_input,omitempty"`
	// NotCounted says why a text job's input was not counted (the paths
	// then price the estimate): no counter here, or the count failed.
	NotCounted string `json:"not_counted,omitempty"`
	// Reused is how many records a submit with reuse would answer from
	// earlier results (never sent); ReuseSavingUSD is their share of the
	// estimated cost, which they would not cost.
	Reused         int     `json:"reused,omitempty"`
	ReuseSavingUSD float64 `json:"reuse_saving_usd,omitempty"`
	// Paths price the job on each way this deployment could run the model
	// (counted input when there is a count, else the estimate; maximum output).
	Paths []PathCost `json:"paths,omitempty"`
	// Auto is the path mode auto picks, AutoWhy the reason.
	Auto    string `json:"auto,omitempty"`
	AutoWhy string `json:"auto_why,omitempty"`
	// Content counts the images and documents.
	Content *content.Summary `json:"content,omitempty"`
	// Problems are everything that would refuse the submit; none: it would go.
	Problems []string `json:"problems,omitempty"`
	// Warnings are what the job would carry (a legacy model).
	Warnings []string `json:"warnings,omitempty"`
}

// DryRun validates a submit and estimates it: the parts it would create, its
// tokens and cost, and every problem with its images and documents. It stores
// nothing and submits nothing. Problems with the request itself (model, mode,
// fields) are errors as for Submit.
func (s *Service) DryRun(ctx context.Context, req SubmitRequest) (*DryRunResult, error) {
	if err := s.validate(&req); err != nil {
		return nil, err
	}
	prov := s.Providers.Get(req.Provider)
	md, err := s.checkMedia(ctx, &req, prov.Limits())
	if err != nil {
		return nil, err
	}
	deadlineErr := s.checkDeadline(&req, md) // may move an auto job on demand
	out := &DryRunResult{Provider: req.Provider, Model: req.Model, Mode: req.Mode, Records: len(req.Records),
		MaxOutputTokens: req.outputTokens(0, len(req.Records)),
		Warnings:        append(slices.Clone(req.Warnings), s.recordWarnings(&req, md)...)}
	if md != nil {
		out.Content = &md.summary
		for _, p := range md.problems {
			out.Problems = append(out.Problems, p.Error())
		}
	}
	out.EstimatedInputTokens, out.Cost = s.estimate(req, md)
	out.Basis, out.Tier = out.Cost.Basis, out.Cost.PricedTier()
	m, _ := s.Models.LookupModel(req.Model)
	if md != nil && len(md.problems) > 0 {
		// The counter reads what records point at: only sources the media
		// check passed (the caller's own uploads) are read.
		out.NotCounted = "not counted while records have the media problems listed, so the paths price the estimate"
	} else if out.Counted, err = s.countInput(ctx, req, prov, m); err != nil {
		// Not a reason to refuse the submit: the estimate above stands.
		out.NotCounted = "counting failed, so the paths price the estimate: " + err.Error()
		out.Warnings = append(out.Warnings, "input tokens not counted (the estimate stands): "+err.Error())
	} else if out.Counted != nil && out.Counted.Partial != "" {
		out.Warnings = append(out.Warnings, "input counted on fewer records than planned: "+out.Counted.Partial)
	} else if out.Counted == nil && m != nil && m.Task == model.TaskText && len(req.Records) > 0 {
		out.NotCounted = "this deployment has no token counter for " + req.Model + ", so the paths price the estimate"
	}
	if m != nil {
		s.pricePaths(out, m, s.limitsFor(prov, req.Model), s.runsOnDemand(prov))
		deadlinePick(out, req, deadlineErr)
	}
	if err := overBudget(req, out.EstimatedInputTokens, out.Cost); err != nil {
		out.Problems = append(out.Problems, err.Error())
	}
	if deadlineErr != nil {
		out.Problems = append(out.Problems, deadlineErr.Error())
	}
	if err := CheckReuse(&req); err != nil {
		return nil, err
	}
	found, err := s.findReused(ctx, &req)
	if err != nil {
		return nil, err
	}
	if !reusable(&req) {
		found = nil
	}
	out.Reused, out.ReuseSavingUSD = len(found), reuseSaving(out.Cost.Total, len(found), len(req.Records))
	if req.Mode == job.ModeBatch {
		_, sizes, _, err := s.encodeAll(req, prov, md)
		if err != nil {
			out.Problems = append(out.Problems, err.Error())
		} else if parts, err := service.Split(sizes, s.limitsFor(prov, req.Model)); err != nil {
			out.Problems = append(out.Problems, err.Error())
		} else {
			out.Parts = parts
		}
	}
	return out, nil
}

// estimate is a submit's input tokens (text at one token per 4 characters,
// images and documents by shared/content) and the cost of those and of the
// most output it can produce (each record's output cap: outputTokens), at the
// prices of its mode.
func (s *Service) estimate(req SubmitRequest, md *media) (int64, model.Cost) {
	var in int64
	for i := range req.Records {
		in += s.recordTokens(&req.Records[i], md, i, req.Params.System)
	}
	m, ok := s.Models.LookupModel(req.Model)
	if !ok {
		return in, model.Cost{}
	}
	u := model.Usage{Input: in, Output: req.outputTokens(0, len(req.Records))}
	if req.Mode == job.ModeBatch {
		return in, m.Cost(u, model.BasisBatch)
	}
	return in, m.CostTier(u, req.Params.Tier)
}

// checkBudget refuses a submit whose estimate is over its budget_usd, naming both.
func (s *Service) checkBudget(req SubmitRequest, md *media) error {
	if req.BudgetUSD <= 0 {
		return nil
	}
	in, c := s.estimate(req, md)
	return overBudget(req, in, c)
}

// overBudget judges an estimate (in input tokens, cost c) against req's budget_usd.
func overBudget(req SubmitRequest, in int64, c model.Cost) error {
	if req.BudgetUSD <= 0 {
		return nil
	}
	if !c.Priced {
		return job.Fieldf("budget_usd", "model %s has no %s price for %s in the catalog, so a budget cannot be held; submit without budget_usd", req.Model, c.Basis, strings.Join(c.Missing, ", "))
	}
	if c.Total > req.BudgetUSD {
		return job.Fieldf("budget_usd", "the estimated cost $%.4f (about %d input tokens and at most %d output tokens, %d records × max_tokens %d or a record's own, at %s prices) is over budget_usd $%.4f; raise budget_usd, lower max_tokens or submit fewer records",
			c.Total, in, req.outputTokens(0, len(req.Records)), len(req.Records), req.Params.MaxTokens, c.Basis, req.BudgetUSD)
	}
	return nil
}

// recordTokens estimates one record's input tokens.
func (s *Service) recordTokens(r *job.Input, md *media, i int, system string) int64 {
	sys := r.System
	if sys == "" {
		sys = system
	}
	n := content.TextTokens(sys)
	switch {
	case md != nil && md.recs[i] != nil:
		return n + content.RecordTokens(md.recs[i])
	case r.Prompt != "":
		return n + content.TextTokens(r.Prompt)
	case len(r.Messages) > 0:
		if rec, err := content.Parse(i, r.ID, r.Messages); err == nil {
			return n + content.RecordTokens(rec)
		}
		return n + content.TextTokens(string(r.Messages))
	}
	return n + content.TextTokens(string(r.ModelInput))
}

// deadlinePick corrects what auto picks for a deadline that presses (the
// submit's checkDeadline moved the job on demand, or off Flex).
func deadlinePick(out *DryRunResult, req SubmitRequest, deadlineErr error) {
	if req.Deadline.IsZero() || deadlineErr != nil || !req.autoMode || out.Auto == "" {
		return
	}
	pick := job.ModeBatch
	if req.Mode == job.ModeOnDemand {
		pick = "on_demand " + cmp.Or(req.Params.Tier, model.TierStandard)
	}
	if pick != out.Auto && len(req.Warnings) > 0 {
		out.Auto, out.AutoWhy = pick, req.Warnings[len(req.Warnings)-1]
	}
}

// PathCost is a job's estimated cost on one path.
type PathCost struct {
	// Path is batch, on_demand standard|flex|priority, or "anthropic batch":
	// the same Claude model through Anthropic's Message Batches API, listed
	// beside a Bedrock job's paths.
	Path string `json:"path"`
	// Provider runs the path; Model is its model id there.
	Provider string     `json:"provider"`
	Model    string     `json:"model"`
	Cost     model.Cost `json:"cost"`
	// Note says what the price list is and, for information-only paths,
	// what running there would take.
	Note string `json:"note,omitempty"`
	// InfoOnly: auto never picks this path (another provider).
	InfoOnly bool `json:"info_only,omitempty"`
}

// pricePaths lists the cost of each path the model and deployment allow and
// the one mode auto picks, with its reason.
func (s *Service) pricePaths(out *DryRunResult, m *model.Model, lim service.BatchLimits, onDemand bool) {
	in := out.EstimatedInputTokens
	if out.Counted != nil {
		in = out.Counted.Estimate
	}
	u := model.Usage{Input: in, Output: out.MaxOutputTokens}
	odOK := m.Supports(model.ModeOnDemand) && onDemand
	if m.Supports(model.ModeBatch) {
		out.Paths = append(out.Paths, PathCost{Path: "batch", Provider: m.Provider, Model: m.ID, Cost: m.Cost(u, model.BasisBatch),
			Note: batchNote(lim.Title, m)})
	}
	if odOK {
		out.Paths = append(out.Paths, PathCost{Path: "on_demand standard", Provider: m.Provider, Model: m.ID, Cost: m.CostTier(u, model.TierStandard)})
		for _, t := range []string{model.TierFlex, model.TierPriority} {
			if _, ok := m.Tier(t); ok {
				out.Paths = append(out.Paths, PathCost{Path: "on_demand " + t, Provider: m.Provider, Model: m.ID, Cost: m.CostTier(u, t)})
			}
		}
	}
	if p, ok := s.anthropicPath(m, u); ok {
		out.Paths = append(out.Paths, p)
	}
	mode, err := modeFor(m, job.ModeAuto, out.Records, lim, onDemand)
	switch {
	case err != nil:
		out.AutoWhy = err.Error()
	case mode == job.ModeBatch && !odOK:
		out.Auto, out.AutoWhy = "batch", "the model runs only as a batch job here"
	case mode == job.ModeBatch:
		// Say the price is lower only where the catalog prices the batch path.
		priced := "batch prices are the lowest listed"
		if len(out.Paths) == 0 || !out.Paths[0].Cost.Priced {
			priced = "batch is the mode for that size (the catalog lists no batch price for this model, so no cost is compared)"
		} else {
			for _, p := range out.Paths[1:] {
				if p.Cost.Priced && !p.InfoOnly && p.Cost.Total <= out.Paths[0].Cost.Total {
					priced = fmt.Sprintf("batch is the mode for that size (%s costs no more here; give mode on_demand to run it so)", p.Path)
					break
				}
			}
		}
		out.Auto, out.AutoWhy = "batch", fmt.Sprintf("%d records reach %s's minimum of %d per job, and %s", out.Records, lim.Title, lim.MinRecords, priced)
	default:
		tier := model.TierStandard
		if _, ok := m.Tier(model.TierFlex); ok {
			tier = model.TierFlex
		}
		out.Auto = "on_demand " + tier
		why := fmt.Sprintf("%d records are under %s's minimum of %d per job", out.Records, lim.Title, lim.MinRecords)
		if !m.Supports(model.ModeBatch) {
			why = "the model does not run as a batch job"
		}
		if tier == model.TierFlex {
			why += "; the model offers flex with known prices and no deadline presses the job"
		}
		out.AutoWhy = why
	}
}

// batchNote names a batch path's price list and its discount on the
// model's standard prices, as the catalog lists both.
func batchNote(title string, m *model.Model) string {
	p := m.Prices
	if p.Input == nil || p.BatchInput == nil || *p.Input <= 0 {
		return title + " prices"
	}
	return fmt.Sprintf("%s prices: input %.0f%% below the standard price (catalog, prices as of %s)", title, 100*(1 - *p.BatchInput / *p.Input), m.PricesAsOf)
}

// anthropicPath prices a Bedrock Claude job on Anthropic's Message Batches
// API, as information beside the Bedrock paths. It is listed only where that
// is an honest comparison: the catalog has the same model on the Anthropic
// API (same family and name), it has not reached its end of life there, and
// it has batch prices. The input is the same figure as the Bedrock paths'
// (counted by Bedrock when counted: the same model reads the same tokens),
// the output the same maximum. Auto never picks it: another provider means
// the records leave AWS for Anthropic's API under another agreement and bill,
// a choice only the caller can make.
func (s *Service) anthropicPath(m *model.Model, u model.Usage) (PathCost, bool) {
	if m.Provider != model.ProviderBedrock || m.Family != "claude" || m.Task != model.TaskText {
		return PathCost{}, false
	}
	twin, here := s.anthropicTwin(m)
	if twin == nil || twin.Prices.BatchInput == nil || twin.Prices.BatchOutput == nil {
		return PathCost{}, false
	}
	if _, err := twin.Usable(s.Clock.Now()); err != nil {
		return PathCost{}, false
	}
	note := batchNote("Anthropic Message Batches", twin) + "; information only: auto keeps the job on Bedrock (the records would leave AWS for Anthropic's API)"
	if p, ok := s.Providers.Lookup(model.ProviderAnthropic); here && ok && p.Allows(twin.ID) {
		note += fmt.Sprintf("; to run it there, submit with provider %s and model %s", model.ProviderAnthropic, twin.ID)
	} else {
		note += "; this deployment does not offer it (no Anthropic API key, or the model is not allowed)"
	}
	return PathCost{Path: "anthropic batch", Provider: model.ProviderAnthropic, Model: twin.ID, Cost: twin.Cost(u, model.BasisBatch),
		Note: note, InfoOnly: true}, true
}

// anthropicTwin is the Anthropic API model of the same family and name as m
// in this deployment's catalog (here) or else in the embedded one; nil when
// neither has it.
func (s *Service) anthropicTwin(m *model.Model) (twin *model.Model, here bool) {
	find := func(c *model.Catalog) *model.Model {
		for _, x := range c.All() {
			if x.Provider == model.ProviderAnthropic && x.Family == m.Family && strings.EqualFold(x.Name, m.Name) {
				return x
			}
		}
		return nil
	}
	if s.Models.Catalog != nil {
		if t := find(s.Models.Catalog); t != nil {
			return t, true
		}
	}
	return find(model.Default()), s.Models.Catalog == nil
}
