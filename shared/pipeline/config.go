// Package pipeline runs report pipelines: on a schedule it lists a source of
// documents, turns each into a record through a prompt template, submits one job
// per pipeline and date (the job id is derived from the run key, so a rerun of the
// same date finds the first job instead of submitting again), and when the job
// completes renders the report (shared/report) and notifies the recipients once.
package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // Lambda's minimal image has no zoneinfo; schedules name IANA zones

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/outschema"
	"github.com/mcpbatch/mcpbatch/shared/pipeline/prompt"
	"github.com/mcpbatch/mcpbatch/shared/report"
)

// Config is the pipelines file (infra/pipelines/pipelines.json).
type Config struct {
	Pipelines []Pipeline `json:"pipelines"`
}

// Pipeline is one scheduled report.
type Pipeline struct {
	Name string `json:"name"`
	// Schedule is an EventBridge Scheduler expression, e.g. "cron(0 2 * * ? *)".
	Schedule string `json:"schedule"`
	// TimeZone is the IANA zone the schedule and the run date use (default UTC).
	TimeZone string       `json:"time_zone,omitempty"`
	Source   SourceConfig `json:"source"`
	Provider string       `json:"provider,omitempty"` // bedrock (default)
	Model    string       `json:"model"`
	// Mode is auto (default: on demand under the batch minimum), batch or on_demand.
	Mode   string `json:"mode,omitempty"`
	System string `json:"system,omitempty"`
	// Prompt is a Go text/template over a Document.
	Prompt    string `json:"prompt"`
	Output    Output `json:"output"`
	MaxTokens int    `json:"max_tokens,omitempty"`
	TTLDays   int    `json:"ttl_days,omitempty"`
	// BudgetUSD refuses a run whose estimated cost is over it (0: none).
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	Title     string  `json:"title"`
	// Recipients: the SNS topic the summary goes to (empty: the stack's report topic).
	Recipients Recipients `json:"recipients"`
	// MaxDocumentBytes skips bigger documents (default 256 KiB).
	MaxDocumentBytes int64 `json:"max_document_bytes,omitempty"`
	// Kind is report (default) or corpus (corpus.go: embed the documents into Corpus.Index).
	Kind   string        `json:"kind,omitempty"`
	Corpus *CorpusConfig `json:"corpus,omitempty"`

	tmpl *prompt.Template
	loc  *time.Location
}

// SourceConfig is where a pipeline's documents are. {bucket} and {date} are replaced
// by the data bucket and the run date.
type SourceConfig struct {
	S3Prefix string `json:"s3_prefix"`
	LocalDir string `json:"local_dir,omitempty"` // make dev reads this folder instead
}

// Output is what the model is asked to produce.
type Output struct {
	Kind string `json:"kind"` // text | json
	// Fields is the small JSON schema: field name → type (string, number, boolean).
	Fields map[string]string `json:"fields,omitempty"`
	// CategoryField is charted in the report (default "category"); Categories lists its values.
	CategoryField string   `json:"category_field,omitempty"`
	Categories    []string `json:"categories,omitempty"`
	// Schema is a JSON Schema (2020-12) every answer must conform to, as
	// submit_batch's output_schema: constrained natively where the model's
	// API documents it, each answer validated into output_json, a
	// violation failing the record (shared/outschema).
	Schema json.RawMessage `json:"schema,omitempty"`
}

// OutputSchema is the pipeline's output schema as jobs carry it ("": none).
func (p *Pipeline) OutputSchema() string {
	if len(p.Output.Schema) == 0 {
		return ""
	}
	s, err := outschema.For(string(p.Output.Schema))
	if err != nil {
		return "" // validate refused it at load
	}
	return string(s.Raw())
}

// Recipients of a pipeline's notification.
type Recipients struct {
	SNSTopicARN string `json:"sns_topic_arn,omitempty"`
}

// Limits of a pipeline definition.
const (
	DefaultMaxDocumentBytes = 256 << 10
	MaxDocumentBytesLimit   = 4 << 20
)

var (
	namePattern  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)
	schedPattern = regexp.MustCompile(`^(cron\(.+\)|rate\(\d+ (minute|minutes|hour|hours|day|days)\))$`)
	// arnPattern compiles on first use: its {1,256} expands to a program that
	// would cost every function linking this package 0.3 MB at init.
	arnPattern = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$`)
	})
	fieldTypes = map[string]bool{"string": true, "number": true, "boolean": true}
)

// Load reads and validates a pipelines file.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open pipelines file: %w", err)
	}
	defer f.Close()
	return Parse(f)
}

// Parse reads and validates a pipelines config; errors name the pipeline and the field.
func Parse(r io.Reader) (*Config, error) {
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("pipelines file: %w", err)
	}
	seen := map[string]bool{}
	for i := range c.Pipelines {
		p := &c.Pipelines[i]
		if err := p.validate(fmt.Sprintf("pipelines[%d]", i)); err != nil {
			return nil, err
		}
		if seen[p.Name] {
			return nil, job.Fieldf(fmt.Sprintf("pipelines[%d].name", i), "duplicate name %q", p.Name)
		}
		seen[p.Name] = true
	}
	return &c, nil
}

func (p *Pipeline) validate(at string) error {
	f := func(name string) string { return at + "." + name }
	if !namePattern.MatchString(p.Name) {
		return job.Fieldf(f("name"), "%q must match %s", p.Name, namePattern)
	}
	if !schedPattern.MatchString(p.Schedule) {
		return job.Fieldf(f("schedule"), "%q is not an EventBridge Scheduler cron(...) or rate(...) expression", p.Schedule)
	}
	if p.TimeZone == "" {
		p.TimeZone = "UTC"
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		return job.Fieldf(f("time_zone"), "%q is not an IANA time zone", p.TimeZone)
	}
	p.loc = loc
	if !strings.HasPrefix(p.Source.S3Prefix, "s3://") {
		return job.Fieldf(f("source.s3_prefix"), "want s3://bucket/prefix/ ({bucket} names the stack's data bucket), got %q", p.Source.S3Prefix)
	}
	if p.Provider == "" {
		p.Provider = job.ProviderBedrock
	}
	if p.Provider != job.ProviderBedrock {
		return job.Fieldf(f("provider"), "only %q is supported (got %q)", job.ProviderBedrock, p.Provider)
	}
	if p.Model == "" {
		return job.Fieldf(f("model"), "required")
	}
	switch p.Mode {
	case "", job.ModeAuto, job.ModeBatch, job.ModeOnDemand:
	default:
		return job.Fieldf(f("mode"), "must be auto, batch or on_demand (got %q)", p.Mode)
	}
	switch p.Kind {
	case "", KindReport:
		if p.Corpus != nil {
			return job.Fieldf(f("corpus"), "only for kind corpus")
		}
	case KindCorpus:
		return p.validateCorpus(f)
	default:
		return job.Fieldf(f("kind"), "must be report or corpus (got %q)", p.Kind)
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return job.Fieldf(f("prompt"), "required: a Go text/template over the document (the subset package pipeline/prompt runs)")
	}
	switch p.Output.Kind {
	case report.KindText:
	case report.KindJSON:
		if len(p.Output.Fields) == 0 {
			return job.Fieldf(f("output.fields"), "a json output needs its fields, e.g. {\"category\":\"string\",\"summary\":\"string\"}")
		}
		for name, typ := range p.Output.Fields {
			if !fieldTypes[typ] {
				return job.Fieldf(f("output.fields."+name), "type must be string, number or boolean (got %q)", typ)
			}
		}
		if p.Output.CategoryField == "" {
			p.Output.CategoryField = "category"
		}
		if _, ok := p.Output.Fields[p.Output.CategoryField]; !ok {
			return job.Fieldf(f("output.category_field"), "%q is not one of the output fields", p.Output.CategoryField)
		}
	default:
		return job.Fieldf(f("output.kind"), "must be text or json (got %q)", p.Output.Kind)
	}
	if len(p.Output.Schema) > 0 {
		if _, err := outschema.Compile(p.Output.Schema); err != nil {
			var fe *job.FieldError
			if errors.As(err, &fe) {
				return job.Fieldf(f("output."+strings.TrimPrefix(fe.Field, "output_")), "%s", fe.Reason)
			}
			return err
		}
	}
	if p.TTLDays != 0 && (p.TTLDays < job.MinTTLDays || p.TTLDays > job.MaxTTLDays) {
		return job.Fieldf(f("ttl_days"), "must be %d..%d (got %d)", job.MinTTLDays, job.MaxTTLDays, p.TTLDays)
	}
	if err := job.CheckBudget(f("budget_usd"), p.BudgetUSD); err != nil {
		return err
	}
	if p.MaxTokens != 0 && (p.MaxTokens < 1 || p.MaxTokens > 64000) {
		return job.Fieldf(f("max_tokens"), "must be 1..64000 (got %d)", p.MaxTokens)
	}
	if p.Title == "" {
		return job.Fieldf(f("title"), "required")
	}
	if a := p.Recipients.SNSTopicARN; a != "" && !arnPattern().MatchString(a) {
		return job.Fieldf(f("recipients.sns_topic_arn"), "%q is not an SNS topic ARN", a)
	}
	switch {
	case p.MaxDocumentBytes == 0:
		p.MaxDocumentBytes = DefaultMaxDocumentBytes
	case p.MaxDocumentBytes < 1 || p.MaxDocumentBytes > MaxDocumentBytesLimit:
		return job.Fieldf(f("max_document_bytes"), "must be 1..%d (got %d)", MaxDocumentBytesLimit, p.MaxDocumentBytes)
	}
	return nil
}

// CheckTemplates compiles every prompt template; synth calls it so a broken
// template fails the deploy.
func (c *Config) CheckTemplates() error {
	for i := range c.Pipelines {
		if _, err := c.Pipelines[i].template(); err != nil {
			return job.Fieldf(fmt.Sprintf("pipelines[%d].prompt", i), "%v", err)
		}
	}
	return nil
}

func (p *Pipeline) template() (*prompt.Template, error) {
	if p.tmpl != nil {
		return p.tmpl, nil
	}
	t, err := prompt.Parse(p.Name, p.Prompt)
	if err != nil {
		return nil, fmt.Errorf("not a Go text/template: %v", err)
	}
	p.tmpl = t
	return t, nil
}

// Find returns the named pipeline.
func (c *Config) Find(name string) (*Pipeline, error) {
	for i := range c.Pipelines {
		if c.Pipelines[i].Name == name {
			return &c.Pipelines[i], nil
		}
	}
	var names []string
	for _, p := range c.Pipelines {
		names = append(names, p.Name)
	}
	return nil, job.Fieldf("pipeline", "no pipeline %q; configured: %s", name, strings.Join(names, ", "))
}

// Location is the pipeline's time zone.
func (p *Pipeline) Location() *time.Location {
	if p.loc == nil {
		return time.UTC
	}
	return p.loc
}

// SystemPrompt is the job-level system prompt: the pipeline's own, plus the JSON
// contract for json outputs. It is the same for every record, so on-demand runs
// read it from the prompt cache.
func (p *Pipeline) SystemPrompt() string {
	s := strings.TrimSpace(p.System)
	if p.Output.Kind != report.KindJSON {
		return s
	}
	var b bytes.Buffer
	b.WriteString(s)
	b.WriteString("\n\nAnswer with one JSON object only, no prose, with these fields:")
	names := make([]string, 0, len(p.Output.Fields))
	for n := range p.Output.Fields {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\n- %s (%s)", n, p.Output.Fields[n])
	}
	if len(p.Output.Categories) > 0 {
		fmt.Fprintf(&b, "\n%s must be one of the categories below.\ncategories: %s", p.Output.CategoryField, strings.Join(p.Output.Categories, "|"))
	}
	return strings.TrimSpace(b.String())
}

// Expand replaces {bucket} and {date} in a source location.
func Expand(s, bucket, date string) string {
	bucket = strings.TrimPrefix(bucket, "s3://")
	return strings.NewReplacer("{bucket}", bucket, "{date}", date).Replace(s)
}
