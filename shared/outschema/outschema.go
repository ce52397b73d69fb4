// Package outschema is structured output: a job's output schema (a JSON
// Schema 2020-12, or the categories shortcut), checked at submit against
// the suite's bounds and the provider's native dialect, put into the prompt
// where the provider has no native constraint, and every output parsed and
// validated against it (github.com/santhosh-tekuri/jsonschema/v6).
package outschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// The suite's bounds on an output schema: the schema travels in every
// request line (native) or system prompt (prompted), so it is kept small.
const (
	MaxSchemaBytes = 16 << 10
	MaxCategories  = 256
	MaxCategoryLen = 128
	// MaxDepth bounds how deeply schemas nest (objects in arrays in ...).
	MaxDepth = 16
)

// Field names of submit_batch's structured-output inputs, for errors.
const (
	FieldSchema     = "output_schema"
	FieldCategories = "categories"
)

// draft2020 is the only $schema a schema may name (or none).
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// Categories is the schema of the categories shortcut: {"category": one of
// cats} and, with confidence, {"confidence": a number} (0..1 is asked in
// the description: Claude's grammar refuses minimum/maximum).
func Categories(cats []string, confidence bool) (json.RawMessage, error) {
	switch {
	case len(cats) == 0:
		return nil, job.Fieldf(FieldCategories, "give at least one category")
	case len(cats) > MaxCategories:
		return nil, job.Fieldf(FieldCategories, "at most %d categories (got %d)", MaxCategories, len(cats))
	}
	seen := map[string]int{}
	for i, c := range cats {
		f := fmt.Sprintf("%s[%d]", FieldCategories, i)
		switch {
		case strings.TrimSpace(c) == "":
			return nil, job.Fieldf(f, "must not be empty")
		case len(c) > MaxCategoryLen:
			return nil, job.Fieldf(f, "at most %d characters (got %d)", MaxCategoryLen, len(c))
		}
		if prev, dup := seen[c]; dup {
			return nil, job.Fieldf(f, "duplicate category %q (also %s[%d])", c, FieldCategories, prev)
		}
		seen[c] = i
	}
	props := map[string]any{"category": map[string]any{"type": "string", "enum": cats, "description": "the one category that fits best"}}
	required := []string{"category"}
	if confidence {
		props["confidence"] = map[string]any{"type": "number", "description": "how sure you are, from 0 to 1"}
		required = append(required, "confidence")
	}
	return json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

// Schema is a compiled output schema.
type Schema struct {
	raw      json.RawMessage
	doc      any
	compiled *jsonschema.Schema
	// fast checks outputs first when the schema fits its subset (nil: not).
	fast *fastNode
}

// Raw is the schema as given (compacted).
func (s *Schema) Raw() json.RawMessage { return s.raw }

// noLoader refuses every $ref outside the schema: nothing is fetched.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %s points outside the schema; only refs inside it (#/$defs/...) are taken", url)
}

const resource = "mcpbatch:output_schema"

// Compile checks raw (size, JSON, an object, 2020-12, depth) and compiles
// it. Errors are *job.FieldError naming output_schema.
func Compile(raw json.RawMessage) (*Schema, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, job.Fieldf(FieldSchema, "at most %d bytes of JSON (got %d); shorten descriptions or split the job", MaxSchemaBytes, len(raw))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, job.Fieldf(FieldSchema, "not valid JSON: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return nil, job.Fieldf(FieldSchema, "not valid JSON: %v", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, job.Fieldf(FieldSchema, "must be a JSON Schema object, e.g. {\"type\":\"object\",\"properties\":{...}}")
	}
	if d, ok := root["$schema"]; ok && d != draft2020 {
		return nil, job.Fieldf(FieldSchema+".$schema", "must be %s (JSON Schema 2020-12) or absent, got %v", draft2020, d)
	}
	if p, d := deepest(doc, "", 0); d > MaxDepth {
		return nil, job.Fieldf(FieldSchema+p, "nests %d levels deep, over the limit of %d", d, MaxDepth)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(resource, doc); err != nil {
		return nil, job.Fieldf(FieldSchema, "%v", err)
	}
	compiled, err := c.Compile(resource)
	if err != nil {
		return nil, job.Fieldf(FieldSchema, "not a valid JSON Schema 2020-12: %s", strings.ReplaceAll(err.Error(), resource, "output_schema"))
	}
	return &Schema{raw: buf.Bytes(), doc: doc, compiled: compiled, fast: fastFrom(doc)}, nil
}

// deepest is the path and depth of the most deeply nested value of v.
func deepest(v any, path string, depth int) (string, int) {
	best, bestD := path, depth
	visit := func(p string, c any) {
		if cp, cd := deepest(c, p, depth+1); cd > bestD {
			best, bestD = cp, cd
		}
	}
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			visit(path+"."+k, c)
		}
	case []any:
		for i, c := range t {
			visit(fmt.Sprintf("%s[%d]", path, i), c)
		}
	}
	return best, bestD
}

// Violation is why an output failed its schema: Code is
// job.RecordParseFailed or job.RecordSchemaViolation, Path the JSON
// pointer of the offending value in the output ("" for the whole output).
type Violation struct {
	Code, Path, Message string
}

func (v *Violation) Error() string {
	if v.Path == "" {
		return v.Message
	}
	return "at " + v.Path + ": " + v.Message
}

var printer = message.NewPrinter(language.English)

// Check parses an output and validates it: the compact JSON on success. A
// model's text may wrap the JSON in whitespace or one Markdown code fence
// (prompted models often do); anything else around it is a parse failure.
func (s *Schema) Check(output string) (json.RawMessage, *Violation) {
	js, v := s.check(output)
	if v != nil {
		return nil, v
	}
	return json.RawMessage(js), nil
}

// check is Check with the compact JSON as a string (often a substring of
// output: the ingest path stores it as it is).
func (s *Schema) check(output string) (string, *Violation) {
	text := unfence(output)
	inst, compact, ok := decode(text)
	if !ok {
		// Off decode's fast path: encoding/json decides, and names the fault.
		// json.Unmarshal, not the library's decoder: it refuses trailing data
		// too, and costs half as much (numbers as float64, which the library
		// validates as numbers).
		if err := json.Unmarshal([]byte(text), &inst); err != nil {
			return "", &Violation{Code: job.RecordParseFailed, Message: "output is not one JSON value: " + err.Error()}
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(text)); err != nil {
			return "", &Violation{Code: job.RecordParseFailed, Message: "output is not one JSON value: " + err.Error()}
		}
		compact = buf.String()
	}
	if s.fast != nil && s.fast.conforms(inst) {
		return compact, nil
	}
	if err := s.compiled.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return "", &Violation{Code: job.RecordSchemaViolation, Message: err.Error()}
		}
		leaf := ve
		for len(leaf.Causes) > 0 {
			leaf = leaf.Causes[0]
		}
		return "", &Violation{Code: job.RecordSchemaViolation, Path: pointer(leaf.InstanceLocation),
			Message: leaf.ErrorKind.LocalizedString(printer) + " (schema " + keywordPath(leaf) + ")"}
	}
	return compact, nil
}

// keywordPath names the schema keyword an output broke, from the schema's root.
func keywordPath(ve *jsonschema.ValidationError) string {
	loc := ve.SchemaURL
	if i := strings.IndexByte(loc, '#'); i >= 0 {
		loc = loc[i+1:]
	}
	kw := strings.Join(ve.ErrorKind.KeywordPath(), "/")
	if loc == "" && kw == "" {
		return "/"
	}
	return loc + "/" + kw
}

func pointer(loc []string) string {
	if len(loc) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range loc {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// unfence drops surrounding whitespace and one ```/```json fence.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := strings.TrimSuffix(s[3:], "```")
	if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.ContainsAny(body[:nl], "{[\"") {
		body = body[nl+1:] // the fence's language tag
	}
	return strings.TrimSpace(body)
}

// Instruction is what a prompted model is told: the schema between
// <output_schema> tags, answer with the JSON only.
func (s *Schema) Instruction() string {
	return "Answer with exactly one JSON value and nothing else (no prose, no code fence). It must conform to this JSON Schema (2020-12):\n<output_schema>\n" +
		string(s.raw) + "\n</output_schema>"
}

// WithInstruction is system with the schema instruction after it.
func (s *Schema) WithInstruction(system string) string {
	if system == "" {
		return s.Instruction()
	}
	return system + "\n\n" + s.Instruction()
}

// CheckDialect refuses what a native constraint's dialect refuses, naming
// the schema path (output_schema.properties.x.minLength); where says which
// constraint ("Amazon Bedrock batch for model ...").
func (s *Schema) CheckDialect(where string, d model.SchemaDialect) error {
	return walkDialect(dialect{where, d}, s.doc, s.doc, FieldSchema, map[string]bool{"#": true})
}

type dialect struct {
	where string
	model.SchemaDialect
}

// walkDialect checks the schema v at path; stack holds the $refs being
// followed, so a $ref back into one of them is a recursion.
func walkDialect(d dialect, root, v any, path string, stack map[string]bool) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	refuse := func(p, format string, a ...any) error {
		return job.Fieldf(p, "%s: %s (%s) refuses it, as it takes a subset of JSON Schema; leave it out or state the rule in a description", fmt.Sprintf(format, a...), d.where, d.Name)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(d.Unsupported, k) {
			return refuse(path+"."+k, "%s is not supported", k)
		}
	}
	if n, ok := obj["minItems"].(json.Number); ok && d.MaxMinItems >= 0 {
		if i, err := n.Int64(); err == nil && i > int64(d.MaxMinItems) {
			return refuse(path+".minItems", "minItems %d is over the %d supported", i, d.MaxMinItems)
		}
	}
	if f, ok := obj["format"].(string); ok && d.Formats != nil && !slices.Contains(d.Formats, f) {
		return refuse(path+".format", "format %q is not one of %s", f, strings.Join(d.Formats, ", "))
	}
	if d.ObjectsClosed && (obj["type"] == "object" || obj["properties"] != nil) {
		if ap, set := obj["additionalProperties"]; !set || ap != false {
			return job.Fieldf(path+".additionalProperties", "must be false on every object schema for %s (%s), got %s; add \"additionalProperties\": false", d.where, d.Name, describe(ap, set))
		}
	}
	if ref, ok := obj["$ref"].(string); ok {
		switch {
		case d.NoExternalRefs && !strings.HasPrefix(ref, "#"):
			return refuse(path+".$ref", "$ref %q points outside the schema", ref)
		case d.NoRecursion && stack[ref]:
			return refuse(path+".$ref", "$ref %q makes the schema recursive", ref)
		case d.NoRecursion:
			if target := resolve(root, ref); target != nil {
				inner := maps.Clone(stack)
				inner[ref] = true
				if err := walkDialect(d, root, target, path+".$ref", inner); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range keys {
		switch k {
		case "enum", "const", "default", "examples", "$ref", "required", "description", "title":
			continue // values, not schemas
		}
		switch c := obj[k].(type) {
		case map[string]any:
			if k == "properties" || k == "$defs" || k == "definitions" {
				names := make([]string, 0, len(c))
				for n := range c {
					names = append(names, n)
				}
				slices.Sort(names)
				for _, n := range names {
					if err := walkDialect(d, root, c[n], path+"."+k+"."+n, stack); err != nil {
						return err
					}
				}
				continue
			}
			if err := walkDialect(d, root, c, path+"."+k, stack); err != nil {
				return err
			}
		case []any:
			for i, e := range c {
				if err := walkDialect(d, root, e, fmt.Sprintf("%s.%s[%d]", path, k, i), stack); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func describe(v any, set bool) string {
	if !set {
		return "absent"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// resolve is the schema a local $ref ("#/$defs/x") points at (nil: none).
func resolve(root any, ref string) any {
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(ref, "#"), "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[tok]
	}
	return cur
}

// ModelInputRefused is the refusal of a model_input record in a job with
// an output schema: a model_input body is sent unchanged, so the schema
// could be neither put into its prompt nor set as its output format.
func ModelInputRefused(field string) error {
	return job.Fieldf(field, "is sent unchanged, which leaves no place for output_schema/categories; give prompt or messages, or leave the schema out and set the output format inside model_input")
}

// FromInput is the output schema a submit asks for (""; none): a full
// schema, or the categories shortcut, not both.
func FromInput(schema json.RawMessage, cats []string, confidence bool) (string, error) {
	given := len(bytes.TrimSpace(schema)) > 0 && string(bytes.TrimSpace(schema)) != "null"
	switch {
	case given && len(cats) > 0:
		return "", job.Fieldf(FieldCategories, "give output_schema or categories, not both (categories is a shortcut for a schema)")
	case confidence && len(cats) == 0:
		return "", job.Fieldf("confidence", "goes with categories: it adds a confidence number to each answer")
	case len(cats) > 0:
		raw, err := Categories(cats, confidence)
		if err != nil {
			return "", err
		}
		return string(raw), nil
	case given:
		s, err := Compile(schema)
		if err != nil {
			return "", err
		}
		return string(s.Raw()), nil
	}
	return "", nil
}

// Apply checks a succeeded record's output: OutputJSON set when it
// conforms, else the record fails with the violation's code and path and
// keeps its raw Output. Other records are left as they are.
func (s *Schema) Apply(r *job.Record) {
	if r.Status != job.RecordSucceeded {
		return
	}
	js, v := s.check(r.Output)
	if v != nil {
		r.Status, r.ErrorCode, r.ErrorMessage = job.RecordFailed, v.Code, "output does not conform to output_schema: "+v.Error()
		return
	}
	if len(js) <= job.MaxInlineOutputBytes {
		r.OutputJSON = js
	}
}

// ForJob is the schema j's outputs are checked against (nil: none).
func ForJob(j *job.Job) (*Schema, error) {
	raw := j.OutputSchema()
	if raw == "" {
		return nil, nil
	}
	s, err := For(raw)
	if err != nil {
		return nil, fmt.Errorf("output schema of job %s: %w", j.ID, err)
	}
	return s, nil
}
