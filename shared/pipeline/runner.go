package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/report"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// Jobs is the part of the store the runner reads and marks.
type Jobs interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	ListJobs(ctx context.Context, owner string, q store.JobQuery) ([]*job.Job, string, error)
	ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error)
}

// Submitter starts jobs.
type Submitter interface {
	Submit(ctx context.Context, req batch.SubmitRequest) (*job.Job, error)
}

// Notifier sends a report's summary to its recipients (SNS in AWS).
type Notifier interface {
	Notify(ctx context.Context, topicARN, subject, message string) error
}

// Publisher sends events to the project bus.
type Publisher interface {
	Publish(ctx context.Context, detailType string, detail any) error
}

// TickRequest is a scheduled or by-hand run: the EventBridge Scheduler payload and
// the detail of "Pipeline Run Requested". An empty Date means the day of
// ScheduledTime in the pipeline's zone (the scheduler's
// <aws.scheduler.scheduled-time>, so a retry that crosses midnight still runs
// the day it was scheduled for), or today when that is empty too.
type TickRequest struct {
	Pipeline      string `json:"pipeline"`
	Date          string `json:"date,omitempty"`
	ScheduledTime string `json:"scheduled_time,omitempty"`
	// BudgetUSD is run_pipeline's budget_usd for this run (0: the pipeline's);
	// it may only lower the pipeline's (runBudget).
	BudgetUSD float64 `json:"budget_usd,omitempty"`
}

// day is the run date a tick asks for.
func (req TickRequest) day(p *Pipeline) (string, error) {
	if req.Date != "" || req.ScheduledTime == "" {
		return req.Date, nil
	}
	t, err := time.Parse(time.RFC3339, req.ScheduledTime)
	if err != nil {
		return "", job.Fieldf("scheduled_time", "want an RFC 3339 time such as 2026-11-30T02:00:00Z (got %q)", req.ScheduledTime)
	}
	return t.In(p.Location()).Format(time.DateOnly), nil
}

// Runner runs the pipelines of one Config. Its fields are its dependencies.
type Runner struct {
	Config *Config
	Svc    Submitter
	Jobs   Jobs
	Blobs  blob.Store
	Bus    Publisher
	Notify Notifier
	// SourceFor opens a pipeline's document source for a run date.
	SourceFor func(p *Pipeline, date string) (Source, error)
	// Bucket is the s3:// root reports are written under (reports/<pipeline>/<date>/).
	Bucket string
	// TopicARN is the default recipients topic (the stack's report topic).
	TopicARN string
	// LinkTTL is how long the presigned link in a notification should work (default 7
	// days, S3's maximum).
	LinkTTL time.Duration
	// Links signs the notification's link (nil: Blobs.PresignGet for LinkTTL). A link
	// signed with a Lambda role's session dies with that session, hours before 7 days:
	// the AWS signer (shared/app/awsreports) signs with a long-lived identity when one is
	// configured, and otherwise says how long the link really works.
	Links LinkSigner
	Log   *slog.Logger
	Now   func() time.Time
	// Vectors deletes the vectors of corpus pipelines' deleted documents (nil: corpus pipelines fail).
	Vectors VectorDeleter
}

// Owner is the owner of a pipeline's jobs: list_reports lists them by it.
func Owner(pipeline string) string { return "pipeline:" + pipeline }

// ErrNoDocuments: the source held no usable document, so there is nothing to submit.
var ErrNoDocuments = errors.New("no usable documents")

// RunInfo is one run of a pipeline.
type RunInfo struct {
	Pipeline    string `json:"pipeline"`
	Date        string `json:"date"`
	JobID       string `json:"job_id"`
	JobStatus   string `json:"job_status"`
	Mode        string `json:"mode,omitempty"`
	Records     int    `json:"records"`
	Succeeded   int    `json:"succeeded"`
	Failed      int    `json:"failed"`
	Skipped     int    `json:"skipped_documents"`
	ReportReady bool   `json:"report_ready"`
	ReportURI   string `json:"report_uri,omitempty"`
	Notified    bool   `json:"notified"`
	// Created is false when the run already existed (a rerun of the same date).
	Created bool `json:"-"`
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// runKey resolves the pipeline and date and names the run's job.
func (r *Runner) runKey(name, date string) (*Pipeline, string, string, error) {
	p, err := r.Config.Find(name)
	if err != nil {
		return nil, "", "", err
	}
	if date == "" {
		date = r.now().In(p.Location()).Format(time.DateOnly)
	}
	day, err := time.ParseInLocation(time.DateOnly, date, p.Location())
	if err != nil {
		return nil, "", "", job.Fieldf("date", "want YYYY-MM-DD (got %q)", date)
	}
	return p, date, job.RunID(day, p.Name+"/"+date), nil
}

func (r *Runner) reportDir(p, date string) string { return blob.Join(r.Bucket, "reports", p, date) }

// Request asks for a run through the bus (run_pipeline), so the tool call
// returns at once; budgetUSD > 0 lowers the pipeline's budget_usd for it
// (one over the pipeline's is refused: see runBudget).
func (r *Runner) Request(ctx context.Context, name, date string, budgetUSD float64) (RunInfo, error) {
	if err := job.CheckBudget("budget_usd", budgetUSD); err != nil {
		return RunInfo{}, err
	}
	p, date, id, err := r.runKey(name, date)
	if err != nil {
		return RunInfo{}, err
	}
	if p.BudgetUSD > 0 && budgetUSD > p.BudgetUSD {
		return RunInfo{}, job.Fieldf("budget_usd", "must be at most the pipeline's budget_usd %g (got %g): a run's budget may only lower the operator's", p.BudgetUSD, budgetUSD)
	}
	if j, err := r.Jobs.GetJob(ctx, id); err == nil {
		return info(j), nil
	}
	if err := r.inWindow(p, date); err != nil {
		return RunInfo{}, err
	}
	if err := r.usable(ctx, p, date); err != nil {
		return RunInfo{}, err
	}
	if err := r.Bus.Publish(ctx, config.DetailPipelineTick, TickRequest{Pipeline: p.Name, Date: date, BudgetUSD: budgetUSD}); err != nil {
		return RunInfo{}, fmt.Errorf("request run of %s %s: %w", p.Name, date, err)
	}
	return RunInfo{Pipeline: p.Name, Date: date, JobID: id, JobStatus: "requested", Created: true}, nil
}

// inWindow holds a by-hand run to the pipeline's schedule window: the days
// from ttl_days before today to today, in the pipeline's zone. Older runs
// would already have expired; later days have no documents folder yet.
func (r *Runner) inWindow(p *Pipeline, date string) error {
	days := p.TTLDays
	if days <= 0 {
		days = job.DefaultTTLDays
	}
	today := r.now().In(p.Location())
	last := today.Format(time.DateOnly)
	first := today.AddDate(0, 0, -days).Format(time.DateOnly)
	if date < first || date > last { // YYYY-MM-DD sorts as text
		return job.Fieldf("date", "pipeline %s runs for dates in its schedule window %s to %s (today in %s and the %d days before it, its ttl_days); got %s",
			p.Name, first, last, p.Location(), days, date)
	}
	return nil
}

// maxNamedSkips bounds the skipped documents a refusal names.
const maxNamedSkips = 3

// usable refuses a report run whose folder has no document the run could
// use, with the reasons, instead of requesting a run that would submit
// nothing. It reads documents only until the first usable one.
func (r *Runner) usable(ctx context.Context, p *Pipeline, date string) error {
	if p.Kind == KindCorpus {
		return nil // an emptied folder is a corpus run: it deletes the vectors
	}
	src, err := r.SourceFor(p, date)
	if err != nil {
		return err
	}
	b, err := build(ctx, p, src, date, 1)
	if err != nil {
		return err
	}
	if len(b.Records)+len(b.Media) > 0 {
		return nil
	}
	var why []string
	for i, s := range b.Skipped {
		if i == maxNamedSkips {
			why = append(why, fmt.Sprintf("and %d more", len(b.Skipped)-i))
			break
		}
		why = append(why, s.Key+": "+s.Reason)
	}
	msg := fmt.Sprintf("pipeline %s has no usable documents for %s: %d documents, %d skipped", p.Name, date, b.Documents, len(b.Skipped))
	if len(why) > 0 {
		msg += " (" + strings.Join(why, "; ") + ")"
	}
	return job.Fieldf("date", "%s", msg)
}

// runBudget is a run's budget: any caller may run a pipeline, and the
// pipeline's cost is the operator's, so the caller's budget (0: none given)
// may only lower the operator's budget_usd (0: none), never raise or lift it.
func runBudget(p *Pipeline, caller float64) float64 {
	switch {
	case caller <= 0:
		return p.BudgetUSD
	case p.BudgetUSD <= 0:
		return caller
	}
	return min(caller, p.BudgetUSD)
}

// Tick runs a pipeline for a date: one job per pipeline and date. A rerun finds
// the first run's job and submits nothing.
func (r *Runner) Tick(ctx context.Context, req TickRequest) (RunInfo, error) {
	if p, err := r.Config.Find(req.Pipeline); err == nil {
		if req.Date, err = req.day(p); err != nil {
			return RunInfo{}, err
		}
	}
	p, date, id, err := r.runKey(req.Pipeline, req.Date)
	if err != nil {
		return RunInfo{}, err
	}
	log := r.log().With("pipeline", p.Name, "date", date, "job_id", id)
	if j, err := r.Jobs.GetJob(ctx, id); err == nil {
		log.InfoContext(ctx, "pipeline already ran for this date; nothing submitted", "status", j.Status)
		return info(j), nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return RunInfo{}, fmt.Errorf("look up run %s: %w", id, err)
	}
	src, err := r.SourceFor(p, date)
	if err != nil {
		return RunInfo{}, err
	}
	if p.Kind == KindCorpus {
		return r.tickCorpus(ctx, p, src, date, id)
	}
	built, err := Build(ctx, p, src, date)
	if err != nil {
		return RunInfo{}, err
	}
	r.mediaRecords(ctx, p, src, date, built)
	sub := batch.SubmitRequest{
		ID: id, Owner: Owner(p.Name), Model: p.Model, Name: p.Name + " " + date, Mode: p.Mode, Records: built.Records,
		Params: job.Params{System: p.SystemPrompt(), MaxTokens: p.MaxTokens, OutputSchema: p.OutputSchema()}, TTLDays: p.TTLDays, BudgetUSD: runBudget(p, req.BudgetUSD),
	}
	if err := r.dropRefused(ctx, sub, built); err != nil {
		return RunInfo{}, fmt.Errorf("check images and documents of %s %s: %w", p.Name, date, err)
	}
	dir := r.reportDir(p.Name, date)
	if err := r.putJSON(ctx, blob.Join(dir, "skipped.json"), built.Skipped); err != nil {
		return RunInfo{}, err
	}
	if err := r.putJSON(ctx, blob.Join(dir, "documents.json"), built.Keys); err != nil {
		return RunInfo{}, err
	}
	if len(built.Records) == 0 {
		return RunInfo{}, fmt.Errorf("%w in pipeline %s for %s: %d documents, %d skipped", ErrNoDocuments, p.Name, date, built.Documents, len(built.Skipped))
	}
	sub.Records = built.Records
	sub.Pipeline = &job.PipelineRun{Name: p.Name, Date: date, SkippedURI: blob.Join(dir, "skipped.json"), Skipped: len(built.Skipped), Documents: built.Documents}
	j, err := r.Svc.Submit(ctx, sub)
	if fe := (*job.FieldError)(nil); errors.As(err, &fe) {
		// A refusal (budget_usd under the estimate, a record the model cannot
		// take) is kept beside the run's files: get_report tells a by-hand
		// caller, who got "requested" back, why no run started.
		if perr := r.putJSON(ctx, blob.Join(dir, refusedFile), refusal{Reason: err.Error()}); perr != nil {
			log.WarnContext(ctx, "keep the refusal of a pipeline run", "error", perr)
		}
	}
	if errors.Is(err, service.ErrJobExists) {
		// A concurrent tick won the conditional create.
		j, err = r.Jobs.GetJob(ctx, id)
		if err != nil {
			return RunInfo{}, fmt.Errorf("load run %s: %w", id, err)
		}
		return info(j), nil
	}
	if err != nil {
		return RunInfo{}, fmt.Errorf("submit run of %s %s: %w", p.Name, date, err)
	}
	log.InfoContext(ctx, "pipeline run submitted", "records", len(built.Records), "skipped", len(built.Skipped), "mode", j.Mode, "status", j.Status)
	ri := info(j)
	ri.Created = true
	return ri, nil
}

// refusedFile keeps why a run's submit was refused (see Tick).
const refusedFile = "refused.json"

type refusal struct {
	Reason string `json:"reason"`
}

func (r *Runner) putJSON(ctx context.Context, uri string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", uri, err)
	}
	if _, err := r.Blobs.Put(ctx, uri, strings.NewReader(string(b)), "application/json"); err != nil {
		return fmt.Errorf("write %s: %w", uri, err)
	}
	return nil
}

// RunOf is the run whose job is id, read directly (one read, whoever owns
// the job); ok is false when id is no pipeline's run.
func (r *Runner) RunOf(ctx context.Context, id string) (ri RunInfo, ok bool, err error) {
	j, err := r.Jobs.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return RunInfo{}, false, nil
	}
	if err != nil {
		return RunInfo{}, false, fmt.Errorf("look up run %s: %w", id, err)
	}
	if j.Pipeline == nil || j.Owner != Owner(j.Pipeline.Name) {
		return RunInfo{}, false, nil
	}
	return info(j), true, nil
}

func info(j *job.Job) RunInfo {
	ri := RunInfo{JobID: j.ID, JobStatus: string(j.Status), Mode: j.Mode, Records: j.RecordCount, Succeeded: j.Succeeded, Failed: j.Failed}
	if p := j.Pipeline; p != nil {
		ri.Pipeline, ri.Date, ri.Skipped = p.Name, p.Date, p.Skipped
		ri.ReportReady, ri.ReportURI, ri.Notified = p.ReportURI != "", p.ReportURI, !p.Notified.IsZero()
	}
	return ri
}

// OnJobCompleted renders a finished pipeline job's report and notifies once. A
// duplicate "Job Completed" finds the report written and the notification sent.
func (r *Runner) OnJobCompleted(ctx context.Context, jobID string) error {
	j, err := r.Jobs.GetJob(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load job %s: %w", jobID, err)
	}
	if j.Pipeline == nil || !j.Status.Terminal() {
		return nil
	}
	log := r.log().With("pipeline", j.Pipeline.Name, "date", j.Pipeline.Date, "job_id", j.ID)
	p, err := r.Config.Find(j.Pipeline.Name)
	if err != nil {
		log.WarnContext(ctx, "job of a pipeline no longer configured; no report")
		return nil
	}
	if p.Kind == KindCorpus {
		return nil // its vectors are its outcome; the index records the job's completion
	}
	if j.Pipeline.ReportURI == "" {
		dir := r.reportDir(p.Name, j.Pipeline.Date)
		if err := r.render(ctx, p, j, dir); err != nil {
			return err
		}
		j, err = r.Jobs.UpdateJob(ctx, j.ID, func(j *job.Job) error {
			if j.Pipeline.ReportURI != "" {
				return store.ErrNoChange
			}
			j.Pipeline.ReportURI = dir
			return nil
		})
		if err != nil && !errors.Is(err, store.ErrNoChange) {
			return fmt.Errorf("record report of %s: %w", jobID, err)
		}
		log.InfoContext(ctx, "report written", "uri", dir)
	}
	return r.notifyOnce(ctx, p, j)
}

// notifyOnce claims the notification on the job item (a versioned conditional
// write), sends it, and releases the claim if sending failed so a retry sends it.
func (r *Runner) notifyOnce(ctx context.Context, p *Pipeline, j *job.Job) error {
	claimed := false
	now := r.now().UTC()
	_, err := r.Jobs.UpdateJob(ctx, j.ID, func(j *job.Job) error {
		if !j.Pipeline.Notified.IsZero() {
			return store.ErrNoChange
		}
		j.Pipeline.Notified, claimed = now, true
		return nil
	})
	if errors.Is(err, store.ErrNoChange) || !claimed {
		return nil
	}
	if err != nil {
		return fmt.Errorf("claim notification of %s: %w", j.ID, err)
	}
	subject, body, err := r.message(ctx, p, j)
	if err == nil {
		topic := p.Recipients.SNSTopicARN
		if topic == "" {
			topic = r.TopicARN
		}
		err = r.Notify.Notify(ctx, topic, subject, body)
	}
	if err != nil {
		_, uerr := r.Jobs.UpdateJob(ctx, j.ID, func(j *job.Job) error { j.Pipeline.Notified = time.Time{}; return nil })
		return errors.Join(fmt.Errorf("notify report of %s: %w", j.ID, err), uerr)
	}
	return nil
}

func (r *Runner) message(ctx context.Context, p *Pipeline, j *job.Job) (string, string, error) {
	dir := r.reportDir(p.Name, j.Pipeline.Date)
	s, err := r.readSummary(ctx, dir)
	if err != nil {
		return "", "", err
	}
	ttl := r.LinkTTL
	if ttl == 0 {
		ttl = 7 * 24 * time.Hour
	}
	link, valid, err := r.signLink(ctx, blob.Join(dir, "report.html"), ttl)
	if err != nil {
		return "", "", fmt.Errorf("presign report link: %w", err)
	}
	// SNS subjects: ASCII, under 100 characters, no newlines.
	subject := clipASCII(fmt.Sprintf("%s %s: %d of %d succeeded", p.Title, j.Pipeline.Date, s.Succeeded, s.Records), 99)
	var b strings.Builder
	fmt.Fprintf(&b, "%s, run of %s (%s)\n\n", p.Title, j.Pipeline.Date, s.Status)
	fmt.Fprintf(&b, "Records: %d (%d succeeded, %d failed); documents skipped: %d\n", s.Records, s.Succeeded, s.Failed, s.SkippedDocuments)
	fmt.Fprintf(&b, "Model: %s (%s, %s)\nTokens: %d in, %d out; estimated cost $%.4f\n", s.Model, s.Provider, s.Mode, s.InputTokens, s.OutputTokens, s.CostUSD)
	for i, c := range s.Categories {
		if i == 5 {
			break
		}
		fmt.Fprintf(&b, "  %s: %d\n", c.Name, c.Count)
	}
	fmt.Fprintf(&b, "\nReport: %s\n(link valid for %s)\n", link, valid)
	return subject, b.String(), nil
}

// LinkSigner signs a GET link of uri meant to work for ttl and says how long it
// really works (at most ttl).
type LinkSigner interface {
	SignLink(ctx context.Context, uri string, ttl time.Duration) (link string, valid time.Duration, err error)
}

func (r *Runner) signLink(ctx context.Context, uri string, ttl time.Duration) (string, time.Duration, error) {
	if r.Links != nil {
		return r.Links.SignLink(ctx, uri, ttl)
	}
	link, err := r.Blobs.PresignGet(ctx, uri, ttl)
	return link, ttl, err
}

func clipASCII(s string, n int) string {
	out := make([]byte, 0, len(s))
	for _, c := range []byte(s) {
		if c >= 32 && c < 127 {
			out = append(out, c)
		}
	}
	if len(out) > n {
		out = out[:n]
	}
	return string(out)
}

// render writes report.md, report.html and report.json: rendered to temporary
// files first (records are streamed, the files are not held in memory), then uploaded.
func (r *Runner) render(ctx context.Context, p *Pipeline, j *job.Job, dir string) error {
	var skipped []report.Skipped
	if err := r.getJSON(ctx, j.Pipeline.SkippedURI, &skipped); err != nil {
		return err
	}
	keys := map[string]string{}
	if err := r.getJSON(ctx, blob.Join(dir, "documents.json"), &keys); err != nil {
		return err
	}
	base := report.StoreRecords(r.Jobs, j)
	// Show each record under its document key, not its hash id.
	recs := func(ctx context.Context, yield func(job.Record) error) error {
		return base(ctx, func(rec job.Record) error {
			if k, ok := keys[rec.ID]; ok {
				rec.ID = k
			}
			return yield(rec)
		})
	}
	tmp, err := os.MkdirTemp("", "report-")
	if err != nil {
		return fmt.Errorf("report temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	names := []string{"report.md", "report.html", "report.json"}
	files := make([]*os.File, len(names))
	for i, n := range names {
		if files[i], err = os.Create(tmp + "/" + n); err != nil {
			return fmt.Errorf("report temp file: %w", err)
		}
		defer files[i].Close()
	}
	meta := report.Meta{Title: p.Title, Pipeline: p.Name, Date: j.Pipeline.Date, Job: j, OutputKind: p.Output.Kind,
		CategoryField: p.Output.CategoryField, Documents: j.Pipeline.Documents, Skipped: skipped}
	if _, err := report.Render(ctx, meta, recs, report.Outputs{Markdown: files[0], HTML: files[1], JSON: files[2]}); err != nil {
		return fmt.Errorf("render report of %s: %w", j.ID, err)
	}
	types := []string{"text/markdown; charset=utf-8", "text/html; charset=utf-8", "application/json"}
	for i, f := range files {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := r.Blobs.Put(ctx, blob.Join(dir, names[i]), f, types[i]); err != nil {
			return fmt.Errorf("upload %s of %s: %w", names[i], j.ID, err)
		}
	}
	return nil
}

func (r *Runner) getJSON(ctx context.Context, uri string, v any) error {
	if uri == "" {
		return nil
	}
	rc, err := r.Blobs.Open(ctx, uri, 0)
	if errors.Is(err, blob.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", uri, err)
	}
	defer rc.Close()
	if err := json.NewDecoder(rc).Decode(v); err != nil {
		return fmt.Errorf("read %s: %w", uri, err)
	}
	return nil
}

// readSummary decodes only the leading "summary" member of report.json.
func (r *Runner) readSummary(ctx context.Context, dir string) (report.Summary, error) {
	var s report.Summary
	rc, err := r.Blobs.Open(ctx, blob.Join(dir, "report.json"), 0)
	if err != nil {
		return s, fmt.Errorf("open report summary: %w", err)
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	if _, err := dec.Token(); err != nil { // {
		return s, fmt.Errorf("read report summary: %w", err)
	}
	if k, err := dec.Token(); err != nil || k != "summary" {
		return s, fmt.Errorf("read report summary: report.json does not start with its summary")
	}
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("read report summary: %w", err)
	}
	return s, nil
}

// ReportView is get_report's answer.
type ReportView struct {
	Run     RunInfo           `json:"run"`
	Summary *report.Summary   `json:"summary,omitempty"`
	Links   map[string]string `json:"links,omitempty"`
}

// GetReport returns a run's summary and short-lived links to its files.
func (r *Runner) GetReport(ctx context.Context, name, date string, linkTTL time.Duration) (ReportView, error) {
	if date == "" {
		return ReportView{}, job.Fieldf("date", "required, YYYY-MM-DD; list_reports shows the dates")
	}
	p, date, id, err := r.runKey(name, date)
	if err != nil {
		return ReportView{}, err
	}
	j, err := r.Jobs.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		var why refusal
		if err := r.getJSON(ctx, blob.Join(r.reportDir(p.Name, date), refusedFile), &why); err != nil {
			return ReportView{}, err
		}
		if why.Reason != "" {
			return ReportView{}, job.Fieldf("date", "the run of pipeline %s for %s was refused and not started: %s", p.Name, date, why.Reason)
		}
		return ReportView{}, job.Fieldf("date", "pipeline %s has no run on %s (runs are kept for the pipeline's ttl_days); list_reports shows the runs, run_pipeline starts one", p.Name, date)
	}
	if err != nil {
		return ReportView{}, fmt.Errorf("load run %s: %w", id, err)
	}
	v := ReportView{Run: info(j)}
	if !v.Run.ReportReady {
		return v, nil
	}
	s, err := r.readSummary(ctx, j.Pipeline.ReportURI)
	if err != nil {
		return ReportView{}, err
	}
	v.Summary = &s
	v.Links = map[string]string{}
	for _, n := range []string{"report.html", "report.md", "report.json"} {
		if v.Links[n], err = r.Blobs.PresignGet(ctx, blob.Join(j.Pipeline.ReportURI, n), linkTTL); err != nil {
			return ReportView{}, fmt.Errorf("presign %s: %w", n, err)
		}
	}
	return v, nil
}

// ListReports pages through runs, newest first: of one pipeline, or of all of
// them in configuration order (the cursor then carries the pipeline's index).
func (r *Runner) ListReports(ctx context.Context, name, cursor string, limit int) ([]RunInfo, string, error) {
	if limit == 0 {
		limit = job.DefaultPageSize
	}
	if limit < job.MinPageSize || limit > job.MaxPageSize {
		return nil, "", job.Fieldf("limit", "must be %d..%d (got %d)", job.MinPageSize, job.MaxPageSize, limit)
	}
	idx, inner := 0, cursor
	if name == "" && cursor != "" {
		i, rest, ok := strings.Cut(cursor, ".")
		n, err := strconv.Atoi(i)
		if !ok || err != nil || n < 0 || n >= len(r.Config.Pipelines) {
			return nil, "", job.Fieldf("cursor", "not a cursor from a previous list_reports page; omit it to start over")
		}
		idx, inner = n, rest
	}
	var names []string
	if name != "" {
		p, err := r.Config.Find(name)
		if err != nil {
			return nil, "", err
		}
		names = []string{p.Name}
	} else {
		for _, p := range r.Config.Pipelines[idx:] {
			names = append(names, p.Name)
		}
	}
	var out []RunInfo
	for i, n := range names {
		jobs, next, err := r.Jobs.ListJobs(ctx, Owner(n), store.JobQuery{Cursor: inner, Limit: limit - len(out)})
		if errors.Is(err, store.ErrBadCursor) {
			return nil, "", job.Fieldf("cursor", "not a cursor from a previous list_reports page; omit it to start over")
		}
		if err != nil {
			return nil, "", fmt.Errorf("list runs of %s: %w", n, err)
		}
		for _, j := range jobs {
			out = append(out, info(j))
		}
		inner = ""
		if next != "" || (len(out) == limit && i+1 < len(names)) {
			if name != "" {
				return out, next, nil
			}
			if next != "" {
				return out, fmt.Sprintf("%d.%s", idx+i, next), nil
			}
			return out, fmt.Sprintf("%d.", idx+i+1), nil
		}
	}
	return out, "", nil
}
