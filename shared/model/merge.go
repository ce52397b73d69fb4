package model

import (
	"slices"
	"strings"
	"time"
)

// Apply lays the account's facts over the catalog: from then on Lookup, All,
// Missing and Resolve answer from the merged view (safe for concurrent use;
// the last Apply wins). A nil account removes the overlay. It returns the
// merged catalog. Filter and Merge keep working on the catalog's own rows.
func (c *Catalog) Apply(a *Account, now time.Time) *Catalog {
	if a == nil {
		c.over.Store(nil)
		return c
	}
	m := c.WithAccount(a, now)
	c.over.Store(m)
	return m
}

// view is the catalog answering reads: the account overlay when one is set.
func (c *Catalog) view() *Catalog {
	if o := c.over.Load(); o != nil {
		return o
	}
	return c
}

// Current is the catalog reads answer from: the merged view Apply laid
// over c, else c. It changes only when the account's facts do.
func (c *Catalog) Current() *Catalog { return c.view() }

// Account is the account snapshot laid over the catalog (nil: none).
func (c *Catalog) Account() *Account { return c.view().account }

// WithAccount merges an account snapshot over the catalog's own rows and
// returns the merged catalog (c is unchanged). The rules:
//   - Lifecycle, access, the profiles usable in the Region and the batch
//     quotas come from the account when it lists the model; the catalog's
//     successor is kept (the account names none). Where the catalog's
//     lifecycle (an operator override, an announced end of life) is further
//     along than the account's, the stricter reading stands.
//   - Prices come from the account's Price List reading where it lists them,
//     else from the catalog (pricelist.go); quirks, limits of tokens and
//     modalities from the catalog.
//   - A Bedrock model the account lists but the catalog lacks is added when the
//     deployment allows it (Filter's wanted ids, or every one for an unfiltered
//     catalog) and it produces text: provider bedrock, task text, modes from
//     its inference types and batch quotas, no prices (costs come out
//     unpriced). Its output limit is unknown (0): max_tokens is then held to
//     the request's own default.
//   - An Anthropic model GET /v1/models lists gives its max_input_tokens and
//     max_tokens to the catalog row of that id (the API is the provider's own
//     word), and is added like a Bedrock one when the catalog lacks it.
func (c *Catalog) WithAccount(a *Account, now time.Time) *Catalog {
	asOf := a.UpdatedAt.UTC().Format(time.RFC3339)
	byID := make(map[string]*AccountModel, len(a.Bedrock))
	for i := range a.Bedrock {
		byID[a.Bedrock[i].ID] = &a.Bedrock[i]
	}
	anth := make(map[string]*AnthropicFacts, len(a.Anthropic))
	for i := range a.Anthropic {
		anth[a.Anthropic[i].ID] = &a.Anthropic[i]
	}
	usable, appAliases := profilesByModel(a.Profiles)
	profilesRead, quotasRead := !a.HasGap(GapProfiles), !a.HasGap(GapQuotas)
	seen := map[string]bool{}
	out := make([]*Model, 0, len(c.models)+len(a.Bedrock))
	for _, base := range c.models {
		m := *base // shallow copy; fields replaced below are new values
		seen[m.ID] = true
		switch m.Provider {
		case ProviderBedrock:
			am, ok := byID[m.ID]
			f := &AccountFacts{Source: SourceCatalog, Access: AccessUnknown, AsOf: asOf}
			if ok {
				f.Source, f.Access, f.AccessDetail = SourceBoth, accessOf(am), am.AccessDetail
				f.Quotas, f.InferenceTypes = am.Quotas, am.InferenceTypes
				m.Lifecycle = lifecycleOf(am, base.Lifecycle, now)
				if quotasRead {
					batchFromQuotas(&m, f, a.Region)
				}
			}
			if profilesRead {
				f.Profiles = usable[m.ID]
				m.Profiles = withProfiles(m.ID, base.Profiles, usable[m.ID])
			}
			m.Aliases = withAliases(base.Aliases, appAliases[m.ID])
			m.Account = f
			if lp, ok := a.listed(m.ID); ok {
				withPriceList(&m, lp)
			}
		case ProviderAnthropic:
			f := &AccountFacts{Source: SourceCatalog, Access: AccessUnknown, AsOf: asOf}
			if af, ok := anth[m.ID]; ok {
				f.Source, f.Access = SourceBoth, AccessGranted
				if af.MaxTokens > 0 {
					m.MaxOutputTokens = af.MaxTokens
				}
				if af.MaxInputTokens > 0 {
					m.ContextWindow = max(af.MaxInputTokens, m.MaxOutputTokens)
				}
				if l := anthropicLifecycle(af, base.Lifecycle, now); l != nil {
					m.Lifecycle = l
				}
			}
			m.Account = f
		}
		out = append(out, &m)
	}
	wanted := func(id string) bool { return c.wanted == nil || slices.Contains(c.wanted, id) }
	for i := range a.Bedrock {
		am := &a.Bedrock[i]
		if seen[am.ID] || !wanted(am.ID) || !slices.Contains(am.Output, "TEXT") {
			continue
		}
		seen[am.ID] = true
		om := accountOnly(am, usable[am.ID], appAliases[am.ID], asOf, now)
		if lp, ok := a.listed(am.ID); ok {
			withPriceList(om, lp)
			om.Notes = "Offered by this account but not in the embedded catalog: run through Converse, tokens priced from the AWS Price List."
		}
		out = append(out, om)
	}
	for i := range a.Anthropic {
		af := &a.Anthropic[i]
		if seen[af.ID] || c.wanted == nil || !slices.Contains(c.wanted, af.ID) {
			continue // an unfiltered catalog would list every model of the API: only wanted ones
		}
		seen[af.ID] = true
		out = append(out, anthropicOnly(af, asOf, now))
	}
	merged, err := build(dedupeKeys(out), c.asOf, c.source)
	if err != nil { // dedupeKeys leaves no clash
		panic("model: WithAccount: " + err.Error())
	}
	merged.account, merged.wanted, merged.all = a, c.wanted, c.all
	return merged
}

// batchFromQuotas sets whether m takes batch jobs from the account's quotas:
// Bedrock lists batch-inference quotas ("Batch inference job size (in GB)
// for X", "Records per batch inference job for X") only for the models its
// batch inference serves in the Region, so they decide over the catalog's
// modes. A model left with no mode keeps the catalog's (an account cannot
// make a model unusable by omission); f.Batch says why either way.
func batchFromQuotas(m *Model, f *AccountFacts, region string) {
	where := "in " + region
	if region == "" {
		where = "in this Region"
	}
	if f.Quotas.Batch() {
		f.Batch = "the account lists batch inference quotas for it " + where
		if !m.Supports(ModeBatch) {
			m.Modes = append([]Mode{ModeBatch}, m.Modes...)
		}
		return
	}
	f.Batch = "the account lists no batch inference quotas for it " + where + " (Service Quotas, service code bedrock): Bedrock batch inference does not serve it there"
	if !m.Supports(ModeBatch) || len(m.Modes) == 1 {
		return
	}
	m.Modes = slices.DeleteFunc(slices.Clone(m.Modes), func(md Mode) bool { return md == ModeBatch })
	m.BatchMaxOutput = nil
}

// HasGap reports whether the read named (GapProfiles, GapQuotas, ...)
// failed: a gap is recorded as "<name>: <error>".
func (a *Account) HasGap(name string) bool {
	return slices.ContainsFunc(a.Gaps, func(g string) bool { return g == name || strings.HasPrefix(g, name+":") })
}

// Gap names of Account.Gaps that Merge reads.
const (
	GapModels       = "ListFoundationModels"
	GapProfiles     = "ListInferenceProfiles"
	GapAvailability = "GetFoundationModelAvailability"
	GapQuotas       = "ListServiceQuotas"
	GapAnthropic    = "anthropic GET /v1/models"
)

func accessOf(am *AccountModel) string {
	if am.Access == "" {
		return AccessUnknown
	}
	return am.Access
}

// lifecycleOf is the account's lifecycle with the catalog's successor: an end
// of life on or before today is end_of_life whatever the status says.
func lifecycleOf(am *AccountModel, catalog *Lifecycle, now time.Time) *Lifecycle {
	l := &Lifecycle{Status: LifecycleActive, LegacySince: am.LegacySince, EndOfLife: am.EndOfLife, Source: SourceAccount + " (ListFoundationModels)"}
	if strings.EqualFold(am.Lifecycle, "LEGACY") {
		l.Status = LifecycleLegacy
	}
	if am.EndOfLife != "" && am.EndOfLife <= now.UTC().Format(time.DateOnly) {
		l.Status = LifecycleEndOfLife
	}
	return stricter(l, catalog, now)
}

// stricter is the account's lifecycle l unless the catalog's (an operator
// override, or an end of life announced before the account lists it) is
// further along: where the two disagree the stricter reading stands. The
// catalog's successor is kept either way (the account names none), and a
// date one side lacks comes from the other.
func stricter(l, catalog *Lifecycle, now time.Time) *Lifecycle {
	if catalog == nil {
		return l
	}
	if rank(effective(catalog, now)) > rank(l.Status) {
		c := *catalog
		c.Status = effective(catalog, now)
		c.LegacySince, c.EndOfLife = cmpOrStr(c.LegacySince, l.LegacySince), cmpOrStr(c.EndOfLife, l.EndOfLife)
		return &c
	}
	l.Successor = catalog.Successor
	if l.EndOfLife == "" {
		l.EndOfLife = catalog.EndOfLife
	}
	return l
}

// effective is a lifecycle's status on day now: a passed end of life ends it.
func effective(l *Lifecycle, now time.Time) string {
	if l.EndOfLife != "" && l.EndOfLife <= now.UTC().Format(time.DateOnly) {
		return LifecycleEndOfLife
	}
	return l.Status
}

func rank(status string) int {
	switch status {
	case LifecycleLegacy:
		return 1
	case LifecycleEndOfLife:
		return 2
	}
	return 0
}

func cmpOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// profilesByModel maps each base model id to the ids of the active profiles
// routing to it (system-defined first, sorted), and application profiles that
// wrap exactly one model to their ARN and id (aliases of that model).
func profilesByModel(ps []AccountProfile) (usable, appAliases map[string][]string) {
	usable, appAliases = map[string][]string{}, map[string][]string{}
	for _, p := range ps {
		if p.Status != "" && !strings.EqualFold(p.Status, "ACTIVE") {
			continue
		}
		for _, id := range p.Models {
			if !slices.Contains(usable[id], p.ID) {
				usable[id] = append(usable[id], p.ID)
			}
		}
		if strings.EqualFold(p.Type, "APPLICATION") && len(uniq(p.Models)) == 1 {
			for _, k := range []string{p.ARN, p.ID} {
				if k != "" {
					appAliases[p.Models[0]] = append(appAliases[p.Models[0]], k)
				}
			}
		}
	}
	for id := range usable {
		slices.Sort(usable[id])
	}
	return usable, appAliases
}

func uniq(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// withProfiles adds the geography profiles the account offers for id to the
// catalog's (a profile id is "<geography>.<id>"); the catalog's other
// geographies stay, so ids of other Regions still resolve.
func withProfiles(id string, catalog map[string]string, usable []string) map[string]string {
	var add map[string]string
	for _, p := range usable {
		g, rest, ok := strings.Cut(p, ".")
		if !ok || rest != id || !geoRe.MatchString(g) || catalog[g] == p {
			continue
		}
		if add == nil {
			add = make(map[string]string, len(catalog)+1)
			for k, v := range catalog {
				add[k] = v
			}
		}
		add[g] = p
	}
	if add == nil {
		return catalog
	}
	return add
}

func withAliases(catalog, extra []string) []string {
	if len(extra) == 0 {
		return catalog
	}
	out := slices.Clone(catalog)
	for _, a := range extra {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// accountOnly is a text model only the account knows, run through Converse.
func accountOnly(am *AccountModel, usable, aliases []string, asOf string, now time.Time) *Model {
	m := &Model{
		ID: am.ID, Provider: ProviderBedrock, Task: TaskText,
		Family: strings.ToLower(strings.Join(strings.Fields(am.Provider), "-")),
		Name:   am.Name, Aliases: slices.Clone(aliases),
		Lifecycle:   lifecycleOf(am, nil, now),
		FactsSource: SourceAccount + " (ListFoundationModels)", FactsAsOf: asOf[:len(time.DateOnly)],
		Notes: "Offered by this account but not in the embedded catalog: run through Converse, tokens unpriced.",
	}
	if m.Family == "" {
		m.Family = "converse"
	}
	if m.Name == "" {
		m.Name = am.ID
	}
	for _, x := range am.Input {
		switch strings.ToUpper(x) {
		case "TEXT":
			m.InputModalities = append(m.InputModalities, "text")
		case "IMAGE":
			m.InputModalities = append(m.InputModalities, "image")
		}
	}
	if len(m.InputModalities) == 0 {
		m.InputModalities = []string{"text"}
	}
	if am.Quotas.Batch() {
		m.Modes = append(m.Modes, ModeBatch) // batch quotas exist only for models batch inference serves
	}
	onDemand, viaProfile := false, false
	for _, t := range am.InferenceTypes {
		switch strings.ToUpper(t) {
		case "ON_DEMAND":
			onDemand = true
		case "INFERENCE_PROFILE":
			viaProfile = true
		}
	}
	for _, p := range usable {
		if g, rest, ok := strings.Cut(p, "."); ok && rest == am.ID && geoRe.MatchString(g) {
			if m.Profiles == nil {
				m.Profiles = map[string]string{}
			}
			m.Profiles[g] = p
		}
	}
	if onDemand || (viaProfile && len(m.Profiles) > 0) {
		m.Modes = append(m.Modes, ModeOnDemand)
		m.OnDemandRequiresProfile = !onDemand && len(m.Profiles) > 0
	}
	if len(m.Modes) == 0 {
		m.Modes = []Mode{ModeBatch} // the account did not say: let batch inference decide
	}
	m.Account = &AccountFacts{Source: SourceAccount, Access: accessOf(am), AccessDetail: am.AccessDetail,
		Quotas: am.Quotas, Profiles: usable, InferenceTypes: am.InferenceTypes, AsOf: asOf}
	return m
}

// anthropicOnly is an Anthropic API model the catalog lacks.
func anthropicOnly(af *AnthropicFacts, asOf string, now time.Time) *Model {
	m := &Model{
		ID: af.ID, Provider: ProviderAnthropic, Family: "claude", Name: af.Name, Task: TaskText,
		Modes: []Mode{ModeBatch}, MaxOutputTokens: af.MaxTokens, ContextWindow: af.MaxInputTokens,
		InputModalities: []string{"text"},
		FactsSource:     SourceAccount + " (GET /v1/models)", FactsAsOf: asOf[:len(time.DateOnly)],
		Notes: "Listed by the Anthropic API but not in the embedded catalog: tokens unpriced.",
	}
	if m.Name == "" {
		m.Name = af.ID
	}
	for _, c := range af.Capabilities {
		switch c {
		case "image_input":
			m.InputModalities = append(m.InputModalities, "image")
		case "pdf_input":
			m.InputModalities = append(m.InputModalities, "document")
		}
	}
	m.Lifecycle = anthropicLifecycle(af, nil, now)
	m.Account = &AccountFacts{Source: SourceAccount, Access: AccessGranted, AsOf: asOf}
	return m
}

// anthropicLifecycle maps the Models API's lifecycle: deprecated is legacy
// (since deprecated_at), retired is end_of_life, and a retires_at on or
// before today is end_of_life too. nil when the API says nothing.
func anthropicLifecycle(af *AnthropicFacts, catalog *Lifecycle, now time.Time) *Lifecycle {
	if af.Lifecycle == "" {
		return nil
	}
	l := &Lifecycle{Status: LifecycleActive, LegacySince: af.DeprecatedAt, EndOfLife: af.RetiresAt, Source: SourceAccount + " (GET /v1/models)"}
	switch af.Lifecycle {
	case "deprecated":
		l.Status = LifecycleLegacy
	case "retired":
		l.Status = LifecycleEndOfLife
	}
	if !now.IsZero() && af.RetiresAt != "" && af.RetiresAt <= now.UTC().Format(time.DateOnly) {
		l.Status = LifecycleEndOfLife
	}
	return stricter(l, catalog, now)
}

// dedupeKeys drops aliases and profile ids an earlier model already claims
// (account aliases may repeat a catalog id), so build cannot clash.
func dedupeKeys(ms []*Model) []*Model {
	taken := make(map[string]bool, len(ms)*4)
	for _, m := range ms {
		taken[m.ID] = true
	}
	for _, m := range ms {
		var keep []string
		for _, a := range m.Aliases {
			if !taken[a] {
				taken[a] = true
				keep = append(keep, a)
			}
		}
		if len(keep) != len(m.Aliases) {
			m.Aliases = keep
		}
		var drop []string
		for g, p := range m.Profiles {
			if taken[p] {
				drop = append(drop, g)
				continue
			}
			taken[p] = true
		}
		if len(drop) > 0 {
			cp := make(map[string]string, len(m.Profiles))
			for g, p := range m.Profiles {
				if !slices.Contains(drop, g) {
					cp[g] = p
				}
			}
			m.Profiles = cp
		}
	}
	return ms
}

// AccountListing is what list_models shows of the account's word on a model.
type AccountListing struct {
	// Source: catalog, account or both ("" when no account facts were read).
	Source    string     `json:"source,omitempty"`
	Lifecycle *Lifecycle `json:"lifecycle,omitempty"`
	// Access: granted, not_granted or unknown.
	Access string  `json:"access,omitempty"`
	Quotas *Quotas `json:"quotas,omitempty"`
	// Batch says why the model does or does not take batch jobs here (its
	// batch quotas in the account).
	Batch string `json:"batch,omitempty"`
	// Profiles are the inference profiles usable in this Region.
	Profiles []string `json:"profiles,omitempty"`
	// AccountAsOf is when the account was read (RFC 3339).
	AccountAsOf string `json:"account_as_of,omitempty"`
}

func (m *Model) accountListing() AccountListing {
	l := AccountListing{Lifecycle: m.Lifecycle}
	if f := m.Account; f != nil {
		l.Source, l.Access, l.Quotas, l.Batch, l.Profiles, l.AccountAsOf = f.Source, f.Access, f.Quotas, f.Batch, f.Profiles, f.AsOf
	}
	return l
}

// AllowGeographies are the geographies whose system-defined inference
// profiles a default allow-list takes with each allowed Bedrock model: the
// ids a caller names first (us.anthropic.claude-sonnet-4-6 in the US).
var AllowGeographies = []string{"us", "eu", "global"}

// WithProfiles is ids, each Bedrock model among them followed by its
// AllowGeographies profiles as the catalog lists them (with the account's
// where it was merged) that offered keeps (nil: all) and ids lacks.
func (c *Catalog) WithProfiles(ids []string, offered func(profile string) bool) []string {
	out := slices.Clone(ids)
	for _, id := range ids {
		m, ok := c.Lookup(id)
		if !ok || m.Provider != ProviderBedrock || id != m.ID {
			continue
		}
		for _, g := range AllowGeographies {
			p := m.Profiles[g]
			if p != "" && !slices.Contains(out, p) && (offered == nil || offered(p)) {
				out = append(out, p)
			}
		}
	}
	return out
}
