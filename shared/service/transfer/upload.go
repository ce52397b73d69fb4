// Package transfer moves files in and out: create_upload places, jobs
// submitted from a JSONL input file (validated by streaming it, then streamed
// into the provider's input files, asynchronously: see ValidateFile), and
// exports of a job's results to a file. Memory does not grow with the file
// size: see scanFile for the bound.
package transfer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/jsonl"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
)

const (
	// MaxUploadBytes bounds an input file: Bedrock's own limit for one input file is 1 GB.
	MaxUploadBytes = 1 << 30
	// MaxFileRecords caps the records of one file submit. It keeps validation
	// memory bounded whatever the file holds (about 24 bytes a record: a
	// fingerprint and line of each id, and each record's size for the split,
	// so 24 MB at the cap) and the job to 20 Bedrock provider jobs of 50,000
	// records (its per-job record quota) or 10 Anthropic batches of 100,000.
	MaxFileRecords = 1_000_000
	// UploadURLTTL is how long a create_upload link works.
	UploadURLTTL = 15 * time.Minute
	// maxFileProblems is how many invalid lines a failed validation reports.
	maxFileProblems = 20
	// maxFileLineBytes bounds one input line (one record's request body).
	maxFileLineBytes = 4 << 20
	// progressEvery is how many lines pass between two progress reports.
	progressEvery = 5000
)

// batchStarter is the batch flow as file submits use it.
type batchStarter interface {
	ValidateParams(req *batch.SubmitRequest) (service.BatchProvider, error)
	StartNew(ctx context.Context, prov service.BatchProvider, j *job.Job) (*job.Job, error)
	NewMedia(req *batch.SubmitRequest, lim service.BatchLimits) (*batch.Media, error)
	ReuseChunk(ctx context.Context, req batch.SubmitRequest, j *job.Job, ins []job.Input, ords []int) ([]bool, error)
}

// Upload is a place a caller may PUT one input file.
type Upload struct {
	ID       string
	URI      string
	MaxBytes int64
}

// NewUpload names a fresh upload under the owner's own prefix, so an upload id
// is useless to anyone else.
func (s *Service) NewUpload(owner string) Upload {
	id := job.NewID(s.Clock.Now())
	return Upload{ID: id, URI: s.uploadURI(owner, id), MaxBytes: MaxUploadBytes}
}

func (s *Service) uploadURI(owner, id string) string {
	return blob.Join(s.Bucket, "uploads", service.OwnerTag(owner), id+".jsonl")
}

// InputsPrefix is where callers copy input files for input_uri (for example
// with `aws s3 cp`), each under its own owner tag (service.CallerInputPrefixes).
const InputsPrefix = "inputs/"

// FileSubmitRequest is a submit whose records are in a JSONL file: one
// uploaded with create_upload, or any object in the stack's bucket.
type FileSubmitRequest struct {
	batch.SubmitRequest
	UploadID string
	// UploadIDs name many uploads for one job (see multi.go), as does an
	// InputURI folder (ending in "/").
	UploadIDs []string
	InputURI  string
}

// fileRecord is one line of an input file, in our record format
// ({id?, prompt|messages|model_input, system?}) or in Bedrock's native one
// ({recordId, modelInput}).
type fileRecord struct {
	ID         string          `json:"id"`
	Prompt     string          `json:"prompt"`
	Messages   json.RawMessage `json:"messages"`
	System     string          `json:"system"`
	ModelInput json.RawMessage `json:"model_input"`
	RecordID   string          `json:"recordId"`
	Native     json.RawMessage `json:"modelInput"`
}

func (r *fileRecord) input() (job.Input, error) {
	native := r.RecordID != "" || len(r.Native) > 0
	if native {
		if r.ID != "" || r.Prompt != "" || len(r.Messages) > 0 || r.System != "" || len(r.ModelInput) > 0 {
			return job.Input{}, errors.New("mixes Bedrock's native {recordId, modelInput} with our fields (id, prompt, messages, system, model_input); use one format")
		}
		if len(r.Native) == 0 {
			return job.Input{}, errors.New("recordId without modelInput")
		}
		return job.Input{ID: r.RecordID, ModelInput: r.Native}, nil
	}
	if len(r.Messages) > 0 && !bytes.HasPrefix(bytes.TrimSpace(r.Messages), []byte("[")) {
		return job.Input{}, errors.New("messages: must be an array of {role, content}")
	}
	return job.Input{ID: r.ID, Prompt: r.Prompt, Messages: r.Messages, System: r.System, ModelInput: r.ModelInput}, nil
}

// SubmitFile takes a job whose records are in a file. What can be checked
// without reading the file (the input field, provider, model, parameters, that
// the object exists) is checked here; the file itself is checked line by line
// by ValidateFile, in the function sized for it, which the "Input Validation
// Requested" event starts. The job answers at once in status validating, and
// ends failed with the first problems (line numbers) when a line is invalid;
// nothing reaches a provider then.
func (s *Service) SubmitFile(ctx context.Context, req FileSubmitRequest) (*job.Job, error) {
	field, uri, err := s.resolveInput(req)
	if err != nil {
		return nil, err
	}
	var files []inputFile
	if multiInput(req) {
		if field, files, err = s.listInputs(ctx, req); err != nil {
			return nil, err
		}
	}
	if len(req.Records) > 0 {
		return nil, job.Fieldf("records", "give records or %s, not both", field)
	}
	prov, err := s.Batch.ValidateParams(&req.SubmitRequest)
	if err != nil {
		return nil, err
	}
	lim := prov.Limits()
	if !s.Providers.Abilities(prov.Name()).FileInputs {
		return nil, job.Fieldf(field, "file inputs are not supported for provider %s; pass records inline", prov.Name())
	}
	if err := batch.CheckReuse(&req.SubmitRequest); err != nil {
		return nil, err
	}
	if req.Reuse && files != nil {
		return nil, job.Fieldf("reuse", "takes one input file (input_upload_id, or an input_uri naming one object); submit the files one by one with reuse, or without reuse")
	}
	if req.Mode == job.ModeOnDemand {
		return nil, job.Fieldf("mode", "on_demand takes inline records (up to %d); file inputs run as %s jobs", job.MaxOnDemandRecords, lim.Title)
	}
	if files == nil {
		rc, err := s.openInput(ctx, field, uri, nil)
		if err != nil {
			return nil, err
		}
		rc.Close()
	}
	now := s.Clock.Now()
	id := job.NewID(now)
	j := &job.Job{
		ID: id, Owner: req.Owner, Name: req.Name, Provider: prov.Name(), Model: req.Model,
		Status: job.StatusValidating, ProviderStatus: statusValidating, TTLDays: req.TTLDays,
		CreatedAt: now, UpdatedAt: now, ExpiresAt: job.ExpiresAt(now, req.TTLDays),
		InputURI:  blob.Join(s.Bucket, "input", id),
		OutputURI: blob.Join(s.Bucket, "output", id),
		Mode:      job.ModeBatch,
		Params:    &req.Params, Notify: req.Notify,
		// A file's records are keyed by their position in it (ingest reads
		// it from the provider ids), and stored packed.
		InputOrder: true, PackedRecords: true,
	}
	j.ExpiresAt = job.NewExpiresAt(j, now) // held while in flight; TTL counts from the end
	j.AddWarning(req.Warnings...)
	if err := s.putRequest(ctx, j, fileRequest{Field: field, URI: uri, Files: files, Params: req.Params, Reuse: req.Reuse, ReuseSampled: req.ReuseSampled}); err != nil {
		return nil, err
	}
	if err := s.Jobs.CreateJob(ctx, j); err != nil {
		return nil, fmt.Errorf("store job %s: %w", id, err)
	}
	if err := s.Bus.Publish(ctx, config.DetailInputValidation, ValidationRequest{JobID: id}); err != nil {
		err = fmt.Errorf("request validation of %s: %w", id, err)
		return s.failValidation(ctx, id, "the input file could not be handed to validation: "+err.Error())
	}
	return j, nil
}

// resolveInput turns input_upload_id or input_uri into an object URI the owner may read.
func (s *Service) resolveInput(req FileSubmitRequest) (field, uri string, err error) {
	given := 0
	for _, g := range []bool{req.UploadID != "", len(req.UploadIDs) > 0, req.InputURI != ""} {
		if g {
			given++
		}
	}
	switch {
	case given > 1:
		return "", "", job.Fieldf("input_uri", "give one of input_upload_id, input_upload_ids or input_uri, not both")
	case multiInput(req):
		return "", "", nil // listInputs resolves the files
	case req.UploadID != "":
		if !job.ValidID(req.UploadID) {
			return "", "", job.Fieldf("input_upload_id", "%q is not an upload id from create_upload", service.Truncate(req.UploadID, 40))
		}
		return "input_upload_id", s.uploadURI(req.Owner, req.UploadID), nil
	case req.InputURI != "":
		if err := s.inputs().CheckCallerInput("input_uri", req.Owner, req.InputURI); err != nil {
			return "", "", err
		}
		return "input_uri", req.InputURI, nil
	}
	return "", "", job.Fieldf("records", "required: give records, input_upload_id or input_upload_ids (from create_upload), or input_uri")
}

func (s *Service) openInput(ctx context.Context, field, uri string, pin *blob.Version) (io.ReadCloser, error) {
	var rc io.ReadCloser
	var err error
	if pin != nil {
		v := s.Blobs.(blob.Versioned)
		rc, err = retryRead(ctx, func() (io.ReadCloser, error) { return v.OpenVersion(ctx, uri, *pin) })
		if err == nil {
			rc = &resumingReader{ctx: ctx, v: v, field: field, uri: uri, pin: *pin, rc: rc}
		}
	} else {
		rc, err = s.Blobs.Open(ctx, uri, 0)
	}
	if errors.Is(err, blob.ErrChanged) || (pin != nil && errors.Is(err, blob.ErrNotFound)) {
		return nil, changedField(field, uri)
	}
	if errors.Is(err, blob.ErrNotFound) {
		if field == "input_upload_id" {
			return nil, job.Fieldf(field, "no file was uploaded for this id (or it is not yours); PUT the file to the url from create_upload first, within 15 minutes")
		}
		return nil, job.Fieldf(field, "no object at %s", uri)
	}
	if err != nil {
		return nil, fmt.Errorf("open input %s: %w", uri, err)
	}
	return rc, nil
}

// pinInput is the version of the input file every pass of a validation
// reads (nil when the store cannot pin one): a file replaced between passes
// (an upload link used again) fails the job instead of submitting records no
// pass checked.
func (s *Service) pinInput(ctx context.Context, field, uri string) (*blob.Version, error) {
	v, ok := s.Blobs.(blob.Versioned)
	if !ok {
		return nil, nil
	}
	ver, err := retryRead(ctx, func() (blob.Version, error) { return v.Stat(ctx, uri) })
	if errors.Is(err, blob.ErrNotFound) {
		return nil, job.Fieldf(field, "no object at %s (deleted after submit)", uri)
	}
	if err != nil {
		return nil, fmt.Errorf("stat input %s: %w", uri, err)
	}
	return &ver, nil
}

func changedField(field, uri string) error {
	return job.Fieldf(field, "%s changed while it was being validated (replaced or deleted after submit); nothing was submitted; upload the file once and submit again", uri)
}

// decodeLine parses one line of an input file as encoding/json with
// DisallowUnknownFields would, but without a json.Decoder (which allocated a
// decoder and its buffer for every line: a third of the check phase's
// allocations, BenchmarkFanoutCheck) and, for the usual line, without
// encoding/json's reflective decode (decodePlain). Unlike the decoder, it
// refuses text after the object.
func decodeLine(line []byte) (job.Input, error) {
	var fr fileRecord
	if !fr.decodePlain(line) {
		slow := new(fileRecord) // its own: json keeps fr off the stack otherwise
		if err := json.Unmarshal(line, slow); err != nil {
			return job.Input{}, fmt.Errorf("not a JSON object: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
		if key, ok := unknownLineField(line); ok {
			return job.Input{}, fmt.Errorf("unknown field %q; a line is {id?, prompt | messages | model_input, system?} or Bedrock's {recordId, modelInput}", key)
		}
		fr = *slow
	}
	return fr.input()
}

// lineFields are the keys of fileRecord's fields (in their order), which a
// line's keys match as encoding/json matches them (case-insensitively).
var lineFields = func() (out [][]byte) {
	t := reflect.TypeFor[fileRecord]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, []byte(name))
	}
	return out
}()

// lineField is the index of fileRecord's field a key names (-1: none).
func lineField(key []byte) int {
	for i, f := range lineFields {
		if string(key) == string(f) { // the usual spelling, before the fold
			return i
		}
	}
	for i, f := range lineFields {
		if bytes.EqualFold(key, f) {
			return i
		}
	}
	return -1
}

// field points at fileRecord's field i (lineFields' order): a string or
// raw JSON. A switch, not reflection, so a line's record stays on the stack.
func (fr *fileRecord) field(i int) (*string, *json.RawMessage) {
	switch i {
	case 0:
		return &fr.ID, nil
	case 1:
		return &fr.Prompt, nil
	case 2:
		return nil, &fr.Messages
	case 3:
		return &fr.System, nil
	case 4:
		return nil, &fr.ModelInput
	case 5:
		return &fr.RecordID, nil
	case 6:
		return nil, &fr.Native
	}
	return nil, nil
}

// decodePlain decodes a valid line whose keys are fileRecord's, unescaped,
// and whose string fields hold strings without escapes (or null), as
// json.Unmarshal would; it reports false for any other line, which
// json.Unmarshal then decodes (or names what is wrong with).
func (fr *fileRecord) decodePlain(line []byte) bool {
	if !json.Valid(line) {
		return false
	}
	ok, object := true, false
	jsonl.EachMember(line, func(key, val []byte) bool {
		object = true
		f := -1
		if bytes.IndexByte(key, '\\') < 0 {
			f = lineField(key)
		}
		str, raw := fr.field(f)
		switch {
		case str == nil && raw == nil:
			ok = false
		case raw != nil:
			*raw = append(json.RawMessage(nil), val...)
		case string(val) == "null": // json leaves a string field as it is
		case val[0] != '"' || bytes.IndexByte(val, '\\') >= 0 || !utf8.Valid(val):
			ok = false
		default:
			*str = string(val[1 : len(val)-1])
		}
		return ok
	})
	return ok && object
}

// unknownLineField is the first key of the valid JSON line that is no field
// of fileRecord.
func unknownLineField(line []byte) (string, bool) {
	var unknown []byte
	found := false
	jsonl.EachMember(line, func(raw, _ []byte) bool {
		key := raw
		if bytes.IndexByte(raw, '\\') >= 0 { // rare: an escaped key
			var s string
			_ = json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s)
			key = []byte(s)
		}
		if lineField(key) >= 0 {
			return true
		}
		unknown, found = key, true
		return false
	})
	return string(unknown), found
}
