package model

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Environment variables FromEnv reads.
const (
	EnvModelsJSON = "MCPBATCH_MODELS_JSON" // inline override document
	EnvModelsFile = "MCPBATCH_MODELS_FILE" // path of an override document
)

//go:embed catalog.json
var embedded []byte

// Catalog is a validated, read-only set of models. Treat the models it
// returns as read-only too: Default shares them between callers.
type Catalog struct {
	models []*Model // sorted by provider, then id
	index  map[string]*Model
	asOf   string
	source string
	// wanted are ids the deployment allows that the catalog lacks (Filter):
	// the account may offer them (merge.go). nil: every account model.
	wanted []string
	// all is the catalog Filter kept these rows of (nil: this one): an
	// end-of-life model is refused for its end of life even where the
	// deployment does not allow it (lifecycle.go, EndOfLife).
	all *Catalog
	// account is the snapshot a merged catalog was made from; over is the
	// merged view Apply laid over this catalog (merge.go).
	account *Account
	over    atomic.Pointer[Catalog]
}

var (
	defaultOnce sync.Once
	defaultCat  *Catalog
)

// Default is the embedded catalog. It panics only if the embedded JSON is
// broken, which a test rules out.
func Default() *Catalog {
	defaultOnce.Do(func() {
		c, err := Parse(embedded)
		if err != nil {
			panic("model: embedded catalog.json: " + err.Error())
		}
		defaultCat = c
	})
	return defaultCat
}

type document struct {
	PricesAsOf   string            `json:"prices_as_of,omitempty"`
	PricesSource string            `json:"prices_source,omitempty"`
	Models       []json.RawMessage `json:"models"`
	Remove       []string          `json:"remove,omitempty"` // overrides only
}

// strict decodes exactly one JSON value into v, refusing unknown fields.
func strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// entryName names an entry in errors by index and, when it can be read, id.
func entryName(i int, raw []byte) string {
	var probe struct {
		ID any `json:"id"`
	}
	_ = json.Unmarshal(raw, &probe)
	if s, ok := probe.ID.(string); ok && s != "" {
		return fmt.Sprintf("models[%d] (id %q)", i, s)
	}
	return fmt.Sprintf("models[%d]", i)
}

// Parse reads and validates a full catalog document:
// {"prices_as_of": "YYYY-MM-DD", "prices_source": "URL", "models": [...]}.
// Unknown fields are refused; errors name the entry and the field.
func Parse(data []byte) (*Catalog, error) {
	var doc document
	if err := strict(data, &doc); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if doc.Remove != nil {
		return nil, errors.New(`catalog: "remove" belongs in an override document, not in a catalog`)
	}
	if err := checkDate("prices_as_of", doc.PricesAsOf); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	models := make([]*Model, 0, len(doc.Models))
	for i, raw := range doc.Models {
		m, err := parseModel(raw, doc.PricesAsOf, doc.PricesSource)
		if err != nil {
			return nil, fmt.Errorf("catalog: %s: %w", entryName(i, raw), err)
		}
		models = append(models, m)
	}
	c, err := build(models, doc.PricesAsOf, doc.PricesSource)
	if err != nil {
		return nil, err
	}
	// Successors are checked on whole catalogs only: Filter may keep a model
	// without its successor.
	if err := c.checkSuccessors(); err != nil {
		return nil, err
	}
	return c, nil
}

func parseModel(raw []byte, asOf, source string) (*Model, error) {
	var m Model
	if err := strict(raw, &m); err != nil {
		return nil, err
	}
	if m.PricesAsOf == "" {
		m.PricesAsOf = asOf
	}
	if m.PricesSource == "" {
		m.PricesSource = source
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// build indexes models by id, alias and profile id, refusing any clash.
func build(models []*Model, asOf, source string) (*Catalog, error) {
	c := &Catalog{index: map[string]*Model{}, asOf: asOf, source: source}
	for _, m := range models {
		keys := append([]string{m.ID}, m.Aliases...)
		for _, g := range sortedKeys(m.Profiles) {
			keys = append(keys, m.Profiles[g])
		}
		for _, k := range keys {
			if other, dup := c.index[k]; dup {
				if other == m {
					return nil, fmt.Errorf("catalog: model %q: %q appears twice among its id, aliases and profiles", m.ID, k)
				}
				return nil, fmt.Errorf("catalog: model %q: id %q is already used by model %q (ids, aliases and profile ids must be unique)", m.ID, k, other.ID)
			}
			c.index[k] = m
		}
		c.models = append(c.models, m)
	}
	slices.SortFunc(c.models, func(a, b *Model) int {
		if a.Provider != b.Provider {
			return strings.Compare(a.Provider, b.Provider)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return c, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var (
	geoRe   = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	modalOK = []string{"text", "image", "document"}
	ttlOK   = []string{"5m", "1h"}
)

func checkDate(field, s string) error {
	if s == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return fmt.Errorf("%s: %q is not a YYYY-MM-DD date", field, s)
	}
	return nil
}

// validate checks one entry; errors name the field.
func (m *Model) validate() error {
	if m.ID == "" || strings.ContainsAny(m.ID, " \t\n") {
		return fmt.Errorf("id: %q must be a non-empty id without spaces", m.ID)
	}
	for i, a := range m.Aliases {
		if a == "" || strings.ContainsAny(a, " \t\n") {
			return fmt.Errorf("aliases[%d]: %q must be a non-empty id without spaces", i, a)
		}
	}
	if m.Provider != ProviderBedrock && m.Provider != ProviderAnthropic {
		return fmt.Errorf("provider: %q must be %q or %q", m.Provider, ProviderBedrock, ProviderAnthropic)
	}
	if m.Family == "" {
		return errors.New("family: required")
	}
	if m.Name == "" {
		return errors.New("name: required")
	}
	if m.Task != TaskText && m.Task != TaskEmbedding {
		return fmt.Errorf("task: %q must be %q or %q", m.Task, TaskText, TaskEmbedding)
	}
	if len(m.Modes) == 0 {
		return errors.New("modes: at least one of batch, on_demand is required")
	}
	for i, md := range m.Modes {
		if md != ModeBatch && md != ModeOnDemand {
			return fmt.Errorf("modes[%d]: %q must be %q or %q", i, md, ModeBatch, ModeOnDemand)
		}
		if slices.Index(m.Modes, md) != i {
			return fmt.Errorf("modes[%d]: %q is listed twice", i, md)
		}
	}
	if m.Provider == ProviderAnthropic && len(m.Profiles) > 0 {
		return errors.New("profiles: Anthropic API models have no inference profiles")
	}
	for _, g := range sortedKeys(m.Profiles) {
		if !geoRe.MatchString(g) {
			return fmt.Errorf("profiles: geography %q must be lowercase letters, digits and dashes", g)
		}
		if want := g + "." + m.ID; m.Profiles[g] != want {
			return fmt.Errorf("profiles.%s: %q must be %q (geography prefix + base id)", g, m.Profiles[g], want)
		}
	}
	if m.OnDemandRequiresProfile {
		if len(m.Profiles) == 0 {
			return errors.New("on_demand_requires_profile: true but the model has no profiles")
		}
		if !m.Supports(ModeOnDemand) {
			return errors.New("on_demand_requires_profile: true but modes lacks on_demand")
		}
	}
	if len(m.InputModalities) == 0 {
		return errors.New("input_modalities: at least \"text\" is required")
	}
	for i, x := range m.InputModalities {
		if !slices.Contains(modalOK, x) {
			return fmt.Errorf("input_modalities[%d]: %q must be one of %s", i, x, strings.Join(modalOK, ", "))
		}
	}
	switch m.Task {
	case TaskText:
		if m.MaxOutputTokens <= 0 {
			return fmt.Errorf("max_output_tokens: %d must be > 0 for a text model", m.MaxOutputTokens)
		}
		if m.ContextWindow <= 0 {
			return fmt.Errorf("context_window: %d must be > 0 for a text model", m.ContextWindow)
		}
		if m.MaxOutputTokens > m.ContextWindow {
			return fmt.Errorf("max_output_tokens: %d exceeds context_window %d", m.MaxOutputTokens, m.ContextWindow)
		}
		if len(m.EmbeddingDimensions) > 0 {
			return errors.New("embedding_dimensions: only embedding models have dimensions")
		}
	case TaskEmbedding:
		if len(m.EmbeddingDimensions) == 0 {
			return errors.New("embedding_dimensions: required for an embedding model")
		}
		if m.MaxOutputTokens != 0 {
			return errors.New("max_output_tokens: embedding models produce no tokens; leave it out")
		}
	}
	for i, d := range m.EmbeddingDimensions {
		if d <= 0 {
			return fmt.Errorf("embedding_dimensions[%d]: %d must be > 0", i, d)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"context_window", m.ContextWindow}, {"max_input_chars", m.MaxInputChars}, {"max_input_tokens", m.MaxInputTokens}, {"max_texts_per_call", m.MaxTextsPerCall}} {
		if f.v < 0 {
			return fmt.Errorf("%s: %d must be >= 0", f.name, f.v)
		}
	}
	if c := m.Caching; c != nil {
		if c.MinTokens <= 0 {
			return fmt.Errorf("caching.min_tokens: %d must be > 0", c.MinTokens)
		}
		if c.MaxCheckpoints <= 0 {
			return fmt.Errorf("caching.max_checkpoints: %d must be > 0", c.MaxCheckpoints)
		}
		if len(c.TTLs) == 0 {
			return errors.New("caching.ttls: at least one TTL is required")
		}
		for i, t := range c.TTLs {
			if !slices.Contains(ttlOK, t) {
				return fmt.Errorf("caching.ttls[%d]: %q must be one of %s", i, t, strings.Join(ttlOK, ", "))
			}
		}
	}
	p := m.Prices
	for _, f := range []struct {
		name string
		v    *float64
	}{{"input", p.Input}, {"output", p.Output}, {"batch_input", p.BatchInput}, {"batch_output", p.BatchOutput}, {"cache_write", p.CacheWrite}, {"cache_read", p.CacheRead}, {"batch_cache_write", p.BatchCacheWrite}, {"batch_cache_read", p.BatchCacheRead}} {
		if f.v != nil && *f.v < 0 {
			return fmt.Errorf("prices.%s: %v must be >= 0", f.name, *f.v)
		}
	}
	if lc := p.LongContext; lc != nil {
		if lc.AboveInputTokens <= 0 {
			return fmt.Errorf("prices.long_context.above_input_tokens: %d must be > 0", lc.AboveInputTokens)
		}
		for _, f := range []struct {
			name string
			v    *float64
		}{{"input", lc.Input}, {"output", lc.Output}, {"cache_write", lc.CacheWrite}, {"cache_write_1h", lc.CacheWrite1h}, {"cache_read", lc.CacheRead}} {
			if f.v != nil && *f.v < 0 {
				return fmt.Errorf("prices.long_context.%s: %v must be >= 0", f.name, *f.v)
			}
		}
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"cache_write_1h", p.CacheWrite1h}, {"batch_cache_write_1h", p.BatchCacheWrite1h}} {
		if f.v != nil && *f.v < 0 {
			return fmt.Errorf("prices.%s: %v must be >= 0", f.name, *f.v)
		}
	}
	if m.RegionalPremium < 0 {
		return fmt.Errorf("regional_premium: %v must be >= 0", m.RegionalPremium)
	}
	for i, s := range m.Sampling {
		if !slices.Contains(samplingOK, s) {
			return fmt.Errorf("sampling[%d]: %q must be one of %s", i, s, strings.Join(samplingOK, ", "))
		}
	}
	if b := m.BatchMaxOutput; b != nil {
		switch {
		case !m.Supports(ModeBatch):
			return errors.New("batch_max_output: the model does not run in batch")
		case b.Tokens <= m.MaxOutputTokens:
			return fmt.Errorf("batch_max_output.tokens: %d must exceed max_output_tokens %d", b.Tokens, m.MaxOutputTokens)
		case b.BetaHeader == "":
			return errors.New("batch_max_output.beta_header: required (the header that unlocks the limit)")
		}
	}
	if d := m.Documents; d != nil && d.MaxPDFBytes < 0 {
		return fmt.Errorf("documents.max_pdf_bytes: %d must be >= 0", d.MaxPDFBytes)
	}
	if err := m.validateLifecycle(); err != nil {
		return err
	}
	if err := checkDate("facts_as_of", m.FactsAsOf); err != nil {
		return err
	}
	return checkDate("prices_as_of", m.PricesAsOf)
}

// Merge applies an operator override document and returns a new catalog;
// c is unchanged. See the package comment for the merge rules. Top-level
// "prices_as_of"/"prices_source" in the override apply to its own entries
// that do not set them.
func (c *Catalog) Merge(override []byte) (*Catalog, error) {
	var doc document
	if err := strict(override, &doc); err != nil {
		return nil, fmt.Errorf("override: %w", err)
	}
	if err := checkDate("prices_as_of", doc.PricesAsOf); err != nil {
		return nil, fmt.Errorf("override: %w", err)
	}
	byID := map[string]*Model{}
	order := []string{}
	for _, m := range c.models {
		byID[m.ID] = m
		order = append(order, m.ID)
	}
	for i, id := range doc.Remove {
		if _, ok := byID[id]; !ok {
			return nil, fmt.Errorf("override: remove[%d]: %q is not a model id in the catalog", i, id)
		}
		delete(byID, id)
	}
	for i, raw := range doc.Models {
		name := entryName(i, raw)
		var patch map[string]json.RawMessage
		if err := json.Unmarshal(raw, &patch); err != nil {
			return nil, fmt.Errorf("override: %s: %w", name, err)
		}
		var id string
		if err := json.Unmarshal(patch["id"], &id); err != nil || id == "" {
			return nil, fmt.Errorf("override: %s: id: required (a string)", name)
		}
		if doc.PricesAsOf != "" && patch["prices_as_of"] == nil {
			patch["prices_as_of"], _ = json.Marshal(doc.PricesAsOf)
		}
		if doc.PricesSource != "" && patch["prices_source"] == nil {
			patch["prices_source"], _ = json.Marshal(doc.PricesSource)
		}
		merged, err := json.Marshal(patch)
		if err != nil {
			return nil, fmt.Errorf("override: %s: %w", name, err)
		}
		if old, ok := byID[id]; ok {
			base, err := json.Marshal(old)
			if err != nil {
				return nil, fmt.Errorf("override: %s: %w", name, err)
			}
			if merged, err = mergePatch(base, merged); err != nil {
				return nil, fmt.Errorf("override: %s: %w", name, err)
			}
		} else {
			order = append(order, id)
		}
		m, err := parseModel(merged, c.asOf, c.source)
		if err != nil {
			return nil, fmt.Errorf("override: %s: %w", name, err)
		}
		byID[id] = m
	}
	var models []*Model
	for _, id := range order {
		if m, ok := byID[id]; ok {
			models = append(models, m)
			delete(byID, id) // an id added twice is kept once
		}
	}
	out, err := build(models, c.asOf, c.source)
	if err == nil {
		err = out.checkSuccessors()
	}
	if err != nil {
		return nil, fmt.Errorf("override: %w", err)
	}
	return out, nil
}

// mergePatch applies an RFC 7396 JSON Merge Patch.
func mergePatch(target, patch []byte) ([]byte, error) {
	var t, p any
	if err := unmarshalNumber(target, &t); err != nil {
		return nil, err
	}
	if err := unmarshalNumber(patch, &p); err != nil {
		return nil, err
	}
	return json.Marshal(applyPatch(t, p))
}

func unmarshalNumber(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

func applyPatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
		} else {
			tm[k] = applyPatch(tm[k], v)
		}
	}
	return tm
}

// FromEnv is Default merged with the file at $MCPBATCH_MODELS_FILE, then with
// the inline JSON in $MCPBATCH_MODELS_JSON; either may be unset. Errors name
// the variable.
func FromEnv(getenv func(string) string) (*Catalog, error) {
	c := Default()
	if path := strings.TrimSpace(getenv(EnvModelsFile)); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvModelsFile, err)
		}
		if c, err = c.Merge(data); err != nil {
			return nil, fmt.Errorf("%s (%s): %w", EnvModelsFile, path, err)
		}
	}
	if inline := strings.TrimSpace(getenv(EnvModelsJSON)); inline != "" {
		var err error
		if c, err = c.Merge([]byte(inline)); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvModelsJSON, err)
		}
	}
	return c, nil
}

// Lookup finds a model by id, alias, inference-profile id, or a Bedrock ARN
// (arn:aws:bedrock:<region>::foundation-model/<id>,
// arn:aws:bedrock:<region>:<account>:inference-profile/<profile id>).
// Application inference profile ARNs name no model and resolve only when an
// operator lists the ARN as an alias.
func (c *Catalog) Lookup(id string) (*Model, bool) {
	c = c.view()
	if m, ok := c.index[id]; ok {
		return m, true
	}
	kind, rest, ok := bedrockARN(id)
	if !ok {
		return nil, false
	}
	switch kind {
	case "foundation-model", "inference-profile":
		m, ok := c.index[rest]
		return m, ok
	}
	return nil, false
}

// bedrockARN splits arn:<partition>:bedrock:<region>:<account>:<kind>/<rest>.
func bedrockARN(s string) (kind, rest string, ok bool) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "bedrock" {
		return "", "", false
	}
	kind, rest, ok = strings.Cut(parts[5], "/")
	return kind, rest, ok && rest != ""
}

// Resolve is Lookup with an error that says why a model is not found.
func (c *Catalog) Resolve(id string) (*Model, error) {
	c = c.view()
	if strings.TrimSpace(id) == "" {
		return nil, errors.New("model: required")
	}
	if m, ok := c.Lookup(id); ok {
		return m, nil
	}
	if kind, _, ok := bedrockARN(id); ok && kind == "application-inference-profile" {
		return nil, fmt.Errorf("model: %q is not in the catalog: an application inference profile ARN does not say which model it wraps; an operator can add the ARN to that model's aliases (%s)", id, EnvModelsJSON)
	}
	return nil, fmt.Errorf("model: %q is not in the catalog (list_models shows the models this deployment offers)", id)
}

// All returns the models ordered by provider, then id.
func (c *Catalog) All() []*Model { return slices.Clone(c.view().models) }

// Filter keeps the models of provider ("" for any) that ids name (by id,
// alias, profile id or ARN); an empty ids list keeps every model of provider.
// Ids that name no model are ignored here: Missing reports them.
func (c *Catalog) Filter(provider string, ids []string) *Catalog {
	allowed := map[*Model]bool{}
	for _, id := range ids {
		if m, ok := c.Lookup(id); ok {
			allowed[m] = true
		}
	}
	var keep []*Model
	for _, m := range c.models {
		if provider != "" && m.Provider != provider {
			continue
		}
		if len(ids) > 0 && !allowed[m] {
			continue
		}
		keep = append(keep, m)
	}
	out, err := build(keep, c.asOf, c.source)
	if err != nil { // a subset of a valid catalog cannot clash
		panic("model: Filter: " + err.Error())
	}
	if len(ids) > 0 {
		out.wanted = append([]string{}, c.Missing(ids)...) // non-nil: only these
	}
	out.all = c.unfiltered()
	return out
}

// unfiltered is the catalog c was filtered from (c itself if none).
func (c *Catalog) unfiltered() *Catalog {
	if c.all != nil {
		return c.all
	}
	return c
}

// Missing returns the ids that name no model in the catalog, in order.
func (c *Catalog) Missing(ids []string) []string {
	c = c.view()
	var out []string
	for _, id := range ids {
		if _, ok := c.Lookup(id); !ok {
			out = append(out, id)
		}
	}
	return out
}
