package service

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/model"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// ErrJobNotFound is returned for unknown jobs and for other owners' jobs alike,
// so nobody can probe for job ids they do not own.
var ErrJobNotFound = errors.New("job not found")

// ErrJobExists: a submit with a caller-chosen job id (a pipeline run key) that is taken.
var ErrJobExists = errors.New("job already exists")

// ErrQuotaFull is returned by a provider when its concurrent-job quota is used up.
var ErrQuotaFull = errors.New("provider job quota full")

// ModelError is a model outside the allowed list.
type ModelError struct {
	Model   string
	Allowed []string
}

func (e *ModelError) Error() string {
	return fmt.Sprintf("model %q is not allowed here; allowed models: %s", e.Model, strings.Join(e.Allowed, ", "))
}

// Core is a deployment's adapters and settings as the graph holds them
// (storage, the bus, the providers, the clock, the stack's naming). No flow
// embeds it: each names what it uses, and the graph builds those values
// from it (Telemetry, Models, ResultsWriter).
type Core struct {
	Store     store.Store
	Blobs     Blobs
	Bus       Publisher
	Log       *slog.Logger
	Clock     Clock
	Providers *Registry
	// Bucket is the s3:// URI root of job inputs, outputs and big results.
	Bucket string
	// JobPrefix prefixes provider job names so the event rule matches only this stack's jobs.
	JobPrefix string
	// Catalog holds the facts (limits, modes, profiles, prices) of the models
	// this deployment allows (see models.go).
	Catalog *model.Catalog
	// Region is the AWS region the suite runs in: it picks the inference
	// profile of on-demand calls.
	Region string
	// InputAllow are s3:// prefixes an operator opens to every caller's
	// input_uri, besides each caller's own folders (see inputs.go).
	InputAllow []string
	// Metrics receives the flows' measurements (nil: none; see metrics.go).
	Metrics Metrics
}

// ResultsWriter is the writer every flow stores records with (big outputs
// under <Bucket>/results).
func (c *Core) ResultsWriter() store.Writer {
	return store.Writer{Records: c.Store, Objects: c.Blobs, Prefix: ResultsPrefix(c.Bucket)}
}

// ResultsPrefix is where outputs too big for a record item are kept.
func ResultsPrefix(bucket string) string { return blob.Join(bucket, "results") }

// JobUpdater changes one job (store.Store's UpdateJob).
type JobUpdater interface {
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
}

// JobGetter reads one job by id.
type JobGetter interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
}

// OwnedJob loads a job from jobs and hides it unless owner owns it.
func OwnedJob(ctx context.Context, jobs JobGetter, owner, id string) (*job.Job, error) {
	if !job.ValidID(id) {
		return nil, ErrJobNotFound
	}
	j, err := jobs.GetJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrJobNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("load job %s: %w", id, err)
	}
	if j.Owner != owner {
		return nil, ErrJobNotFound
	}
	return j, nil
}

// ParseJobName maps a provider job name back to (job id, part index) without
// a lookup; prefix is the stack's JobPrefix.
func ParseJobName(prefix, name string) (id string, part int, ok bool) {
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return "", 0, false
	}
	id, suffix, hasPart := strings.Cut(rest, "-p")
	if !job.ValidID(id) {
		return "", 0, false
	}
	if !hasPart {
		return id, 0, true
	}
	n, err := strconv.Atoi(suffix)
	if err != nil || n < 1 {
		return "", 0, false
	}
	return id, n - 1, true
}

// OwnerTag identifies an owner in provider tags and object keys without exposing the principal.
func OwnerTag(owner string) string {
	h := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(h[:8])
}

// IDsURI is where a job's caller record ids are kept, one JSON string per line
// in record order: providers see job.ProviderRecordID(i), and ingest maps it
// back through this list (unknown ids are bad lines).
func IDsURI(j *job.Job) string { return blob.Join(j.InputURI, "ids.jsonl") }

// LegacyIDsURI is the id list of jobs submitted before providers got their own
// ids: one raw caller id per line, the same ids the providers saw.
func LegacyIDsURI(j *job.Job) string { return blob.Join(j.InputURI, "ids.txt") }

// WriteID appends one caller id to an id list.
func WriteID(w *bufio.Writer, id string) {
	b, _ := json.Marshal(id) // a string always marshals
	w.Write(b)
	w.WriteByte('\n')
}

// WriteIDs stores the record ids of a job.
func WriteIDs(ctx context.Context, blobs Blobs, j *job.Job, recs []job.Input) error {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriter(pw)
		for _, r := range recs {
			WriteID(w, r.ID)
		}
		pw.CloseWithError(w.Flush())
	}()
	if _, err := blobs.Put(ctx, IDsURI(j), pr, "application/jsonl"); err != nil {
		return fmt.Errorf("write record ids of %s: %w", j.ID, err)
	}
	return nil
}

// Truncate shortens user input quoted back in an error.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// RecordError keeps the last error of a job's handler on the job (what, err),
// for the reconciler to name if it gives up on the job. Best effort: a failed
// write is logged.
func RecordError(ctx context.Context, jobs JobUpdater, log *slog.Logger, id, what string, err error) {
	msg := Truncate(what+": "+err.Error(), 500)
	_, werr := jobs.UpdateJob(ctx, id, func(j *job.Job) error {
		if j.Status.Terminal() || j.LastError == msg {
			return store.ErrNoChange
		}
		j.LastError = msg
		return nil
	})
	if werr != nil && !errors.Is(werr, store.ErrNoChange) && !errors.Is(werr, store.ErrNotFound) {
		Logger(log).ErrorContext(ctx, "record job error", "job_id", id, "error", werr)
	}
}
