// Package retry makes a new job from a finished job's failed records
// (retry_failed) and reads a job's results merged over its retries.
//
// The child job reruns the parent's records as the caller gave them, with the
// same caller ids, model and parameters unless overridden, in mode auto (on
// demand under the batch minimum). The records come from the parent's kept
// caller inputs (service.InputsURI): batch input files hold provider-encoded
// lines, so submits keep a copy of the caller's records beside ids.jsonl.
// The child's id is derived from the parent's id and the selection (the sorted
// record ids and the overrides), so asking twice gives the same child.
package retry

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Submitter starts the child job (the batch service: it hands small jobs to on demand).
type Submitter interface {
	Submit(ctx context.Context, req batch.SubmitRequest) (*job.Job, error)
}

// Request is one retry_failed call.
type Request struct {
	Owner string
	JobID string
	// Which is job.RetryAll (default), job.RetryRetryable or job.RetryIDs.
	Which     string
	RecordIDs []string
	// Overrides (zero: the parent's).
	Model     string
	MaxTokens int
	Mode      string
	// Notify replaces the parent's notification settings (nil: the parent's).
	Notify *job.Notify
	// BudgetUSD caps the retry's cost (0: none; the parent's budget is not carried over).
	BudgetUSD float64
}

// MaxRetriesPerJob bounds the retry jobs of one job: each new selection or
// override makes one, and the job item lists them (retried_by).
const MaxRetriesPerJob = 10

// MaxRecordIDs bounds an explicit list: no job holds more failed records than
// a Bedrock file holds records.
const MaxRecordIDs = job.BedrockMaxRecords

// Retry starts (or finds) the child job of req. existed reports that the
// same selection had been retried before and the earlier child is returned.
func (s *Service) Retry(ctx context.Context, req Request) (child *job.Job, existed bool, err error) {
	parent, err := service.OwnedJob(ctx, s.Jobs, req.Owner, req.JobID)
	if err != nil {
		return nil, false, err
	}
	if !parent.Status.Terminal() {
		return nil, false, job.Fieldf("job_id", "job %s is %s; retry_failed takes finished jobs (get_job says terminal: true)", parent.ID, parent.Status)
	}
	if _, ok := s.Providers.Lookup(parent.Provider); !ok {
		return nil, false, job.Fieldf("job_id", "job %s ran on %s; retry_failed retries batch and on-demand jobs (call the endpoint again for SageMaker)", parent.ID, parent.Provider)
	}
	which, err := checkWhich(req)
	if err != nil {
		return nil, false, err
	}
	failed, ordinals, err := s.parentFailed(ctx, parent)
	if err != nil {
		return nil, false, err
	}
	ids, err := selectIDs(parent, failed, nil, which, req.RecordIDs)
	if err != nil {
		return nil, false, err
	}
	// The same selection asked again answers its first child.
	id := job.RetryChildID(parent, selectionKey(ids, req))
	if c, err := s.existingChild(ctx, parent, id); c != nil || err != nil {
		return c, c != nil, err
	}
	// A new retry takes what is still failed in the merged view: a record
	// an earlier retry turned into a success is not run again, one that
	// failed again is judged by its newest error.
	if len(parent.RetriedBy) > 0 {
		succeededIn, err := s.mergeRetried(ctx, parent, failed, ordinals)
		if err != nil {
			return nil, false, err
		}
		if ids, err = selectIDs(parent, failed, succeededIn, which, req.RecordIDs); err != nil {
			return nil, false, err
		}
		id = job.RetryChildID(parent, selectionKey(ids, req))
		if c, err := s.existingChild(ctx, parent, id); c != nil || err != nil {
			return c, c != nil, err
		}
	}
	if n := len(parent.RetriedBy); n >= MaxRetriesPerJob {
		return nil, false, job.Fieldf("job_id", "job %s has %d retries, and a job takes at most %d retries; get_job_results with latest: true shows their merged outcome, and retry_failed on its newest retry (%s) retries what is still failed there",
			parent.ID, n, MaxRetriesPerJob, parent.RetriedBy[n-1])
	}
	recs, err := s.inputs(ctx, parent, ids)
	if err != nil {
		return nil, false, err
	}
	sr, err := childRequest(parent, req, id, recs, ordinals)
	if err != nil {
		return nil, false, err
	}
	child, err = s.Batch.Submit(ctx, sr)
	if errors.Is(err, service.ErrJobExists) {
		// A concurrent call with the same selection won the race: its child is ours.
		if child, err = s.Jobs.GetJob(ctx, id); err != nil {
			return nil, false, fmt.Errorf("load retry %s of %s: %w", id, parent.ID, err)
		}
		existed = true
	}
	if err != nil {
		return nil, false, err
	}
	service.Logger(s.Log).InfoContext(ctx, "retry submitted", "job_id", child.ID, "retry_of", parent.ID, "which", which, "records", len(recs))
	return child, existed, s.link(ctx, parent.ID, child.ID)
}

func checkWhich(req Request) (string, error) {
	which := req.Which
	if which == "" {
		which = job.RetryAll
		if len(req.RecordIDs) > 0 {
			which = job.RetryIDs
		}
	}
	switch which {
	case job.RetryAll, job.RetryRetryable:
		if len(req.RecordIDs) > 0 {
			return "", job.Fieldf("record_ids", "only with which=ids (got which=%s)", which)
		}
	case job.RetryIDs:
		switch n := len(req.RecordIDs); {
		case n == 0:
			return "", job.Fieldf("record_ids", "give at least one failed record id with which=ids")
		case n > MaxRecordIDs:
			return "", job.Fieldf("record_ids", "at most %d ids (got %d)", MaxRecordIDs, n)
		}
	default:
		return "", job.Fieldf("which", "must be one of all, retryable, ids (got %q)", service.Truncate(which, 40))
	}
	return which, nil
}

// existingChild is the retry id of parent when it exists (nil, nil when not).
func (s *Service) existingChild(ctx context.Context, parent *job.Job, id string) (*job.Job, error) {
	c, err := s.Jobs.GetJob(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("look up retry %s of %s: %w", id, parent.ID, err)
	case c.Owner != parent.Owner || c.RetryOf != parent.ID:
		return nil, fmt.Errorf("job %s exists but is not a retry of %s", id, parent.ID)
	}
	return c, s.link(ctx, parent.ID, id)
}

// parentFailed reads the parent's own failed records: id → error code, and
// id → input ordinal (which a retried record keeps).
func (s *Service) parentFailed(ctx context.Context, parent *job.Job) (failed map[string]string, ordinals map[string]int, err error) {
	failed, ordinals = map[string]string{}, map[string]int{}
	for r, err := range store.Records(ctx, s.Jobs, parent.RecordSet(), store.RecordQuery{Status: job.RecordFailed}) {
		if err != nil {
			return nil, nil, fmt.Errorf("list failed records of %s: %w", parent.ID, err)
		}
		failed[r.ID], ordinals[r.ID] = r.ErrorCode, r.Ordinal
	}
	if len(failed) == 0 {
		return nil, nil, job.Fieldf("job_id", "job %s has no failed records to retry (%d succeeded)", parent.ID, parent.Succeeded)
	}
	return failed, ordinals, nil
}

// selectIDs keeps the failed records (id → error code) the selection names;
// succeededIn (id → retry) are records a retry turned into successes.
func selectIDs(parent *job.Job, failed, succeededIn map[string]string, which string, want []string) (map[string]bool, error) {
	if len(failed) == 0 {
		return nil, job.Fieldf("job_id", "job %s has no failed records left: its retries turned all %d into successes (get_job_results with latest: true shows them)", parent.ID, len(succeededIn))
	}
	ids := map[string]bool{}
	switch which {
	case job.RetryAll:
		for id := range failed {
			ids[id] = true
		}
	case job.RetryRetryable:
		codes := map[string]bool{}
		for id, code := range failed {
			if job.Retryable(code) {
				ids[id] = true
			} else {
				codes[code] = true
			}
		}
		if len(ids) == 0 {
			names := make([]string, 0, len(codes))
			for c := range codes {
				names = append(names, strconv.Quote(c))
			}
			slices.Sort(names)
			return nil, job.Fieldf("which", "none of the %d failed records of job %s failed in a retryable way (throttling, timeout, 5xx); their error codes: %s; use which=all to retry them anyway",
				len(failed), parent.ID, service.Truncate(strings.Join(names, ", "), 300))
		}
	case job.RetryIDs:
		for i, id := range want {
			if by, ok := succeededIn[id]; ok {
				return nil, job.Fieldf(fmt.Sprintf("record_ids[%d]", i), "%q already succeeded in retry %s of job %s (get_job_results with latest: true shows it)", service.Truncate(id, 80), by, parent.ID)
			}
			if _, ok := failed[id]; !ok {
				return nil, job.Fieldf(fmt.Sprintf("record_ids[%d]", i), "%q is not a failed record of job %s", service.Truncate(id, 80), parent.ID)
			}
			ids[id] = true
		}
	}
	return ids, nil
}

// mergeRetried applies parent's retries to failed (id → error code): a
// record a retry turned into a success leaves it (returned: id → that
// retry), one that failed again takes the newest error code.
func (s *Service) mergeRetried(ctx context.Context, parent *job.Job, failed map[string]string, ordinals map[string]int) (map[string]string, error) {
	succeededIn := map[string]string{}
	chain, err := s.retryChain(ctx, parent)
	if err != nil {
		return nil, err
	}
	keys := make([]job.RecordKey, 0, len(failed))
	for id := range failed {
		keys = append(keys, job.RecordKey{ID: id, Ordinal: ordinals[id]})
	}
	latest, err := s.latestOf(ctx, s.Jobs, parent, chain, keys)
	if err != nil {
		return nil, err
	}
	for id, r := range latest {
		if r.Status == job.RecordSucceeded {
			delete(failed, id)
			succeededIn[id] = r.JobID
		} else {
			failed[id] = r.ErrorCode
		}
	}
	return succeededIn, nil
}

// selectionKey names a selection: the sorted ids and the overrides.
func selectionKey(ids map[string]bool, req Request) string {
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	slices.Sort(sorted)
	b, _ := json.Marshal(struct {
		IDs       []string `json:"ids"`
		Model     string   `json:"model,omitempty"`
		MaxTokens int      `json:"maxTokens,omitempty"`
		Mode      string   `json:"mode,omitempty"`
	}{sorted, req.Model, req.MaxTokens, req.Mode})
	return string(b)
}

// inputs reads the parent's kept caller records named in ids, in the parent's order.
func (s *Service) inputs(ctx context.Context, parent *job.Job, ids map[string]bool) ([]job.Input, error) {
	uri := service.InputsURI(parent)
	rc, err := service.OpenKept(ctx, s.Blobs, parent, uri)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, job.Fieldf("job_id", "the records of job %s were not kept (it was submitted before retry_failed existed); resubmit them with submit_batch", parent.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("open records of %s: %w", parent.ID, err)
	}
	defer rc.Close()
	r := bufio.NewReaderSize(rc, 256<<10)
	out := make([]job.Input, 0, len(ids))
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var in job.Input
			if jerr := json.Unmarshal(line, &in); jerr != nil {
				return nil, fmt.Errorf("records of %s line %d: %w", parent.ID, n, jerr)
			}
			if ids[in.ID] {
				out = append(out, in)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read records of %s: %w", parent.ID, err)
		}
	}
	if len(out) != len(ids) {
		return nil, fmt.Errorf("records of %s: found %d of the %d failed ids in %s", parent.ID, len(out), len(ids), uri)
	}
	return out, nil
}

// childRequest is the submit of the child: the parent's settings unless
// overridden. Its records keep their ordinals in parent (ordinals: id →
// ordinal), so its results and the merged view list in the input order of
// the job first retried; a parent keyed by id has its retries keyed by id.
func childRequest(parent *job.Job, req Request, id string, recs []job.Input, ordinals map[string]int) (batch.SubmitRequest, error) {
	var p job.Params
	switch {
	case parent.Params != nil:
		p = *parent.Params
	case parent.OnDemand != nil:
		p = parent.OnDemand.Params
	default:
		return batch.SubmitRequest{}, job.Fieldf("job_id", "the parameters of job %s were not kept (it was submitted before retry_failed existed); resubmit its records with submit_batch", parent.ID)
	}
	if req.MaxTokens != 0 {
		p.MaxTokens = req.MaxTokens
	}
	// The child settles its own service tier (auto) for its model and mode:
	// the parent's may not exist on another model or apply to a batch child.
	p.Tier = ""
	model, provider := parent.Model, parent.Provider
	if req.Model != "" && req.Model != parent.Model {
		model, provider = req.Model, "" // the model picks its provider
	}
	name := "retry of " + parent.ID
	if parent.Name != "" {
		name = service.Truncate("retry of "+parent.Name, 120)
	}
	notify := parent.Notify
	if req.Notify != nil {
		notify = req.Notify
	}
	sr := batch.SubmitRequest{
		Owner: parent.Owner, Model: model, Provider: provider, Name: name, Records: recs, Params: p,
		TTLDays: parent.TTLDays, Mode: req.Mode, ID: id, RetryOf: parent.ID, Notify: notify, BudgetUSD: req.BudgetUSD,
		ByID: !parent.InputOrder,
	}
	if parent.InputOrder {
		sr.Ordinals = make([]int, len(recs))
		for i, r := range recs {
			sr.Ordinals[i] = ordinals[r.ID]
		}
	}
	if parent.Index != nil {
		// The retried vectors go where the parent's went (the submit checks
		// the index still matches the model and dimensions).
		sr.Index = &batch.IndexRequest{Name: parent.Index.Name, Metric: parent.Index.Metric}
	}
	return sr, nil
}

// link records the child on the parent (once).
func (s *Service) link(ctx context.Context, parentID, childID string) error {
	_, err := s.Jobs.UpdateJob(ctx, parentID, func(j *job.Job) error {
		if slices.Contains(j.RetriedBy, childID) {
			return store.ErrNoChange
		}
		j.RetriedBy = append(j.RetriedBy, childID)
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoChange) {
		return fmt.Errorf("link retry %s to %s: %w", childID, parentID, err)
	}
	return nil
}
