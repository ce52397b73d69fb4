package batch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// The result cache (submit_batch reuse: true). A record's key is a hash of
// the owner, provider, model, every generation parameter, the output schema
// and the record's content (inline images and documents are hashed with
// it, so by their bytes; s3:// ones by the digest of theirs, see
// reuse_media.go); what it points at is kept in object storage,
// cache/<owner tag>/<key>.json = {job_id, id}: the last job of the owner
// that submitted the same record with reuse. A later submit with reuse
// answers such a record from that job's result when it succeeded and
// still exists (it expires with its job), and sends only the others.

// reuseConcurrency bounds the index reads and writes of one submit.
const reuseConcurrency = 16

// cacheEntry is what a key points at.
type cacheEntry struct {
	JobID   string `json:"job_id"`
	ID      string `json:"id"`
	Ordinal int    `json:"ordinal"`
}

// reuseKey is the cache key of record in for owner's job of req.
func reuseKey(req *SubmitRequest, in job.Input) string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	// Every field but the record's id and its vector-index metadata, which
	// do not change the answer.
	_ = enc.Encode([]any{"mcpbatch-reuse-v1", req.Owner, req.Provider, req.Model, req.Params,
		in.Prompt, in.Messages, in.System, in.ModelInput, in.Text})
	return hex.EncodeToString(h.Sum(nil))
}

func (s *Service) cacheURI(owner, key string) string {
	return blob.Join(s.Bucket, strings.TrimSuffix(config.PrefixCache, "/"), service.OwnerTag(owner), key+".json")
}

// sampled: the job's answers vary run to run (a temperature above 0, or
// none given, which is the models' default of 1), so a result is reused
// only when the caller asked for it (reuse_sampled).
func sampled(p job.Params) bool { return p.Temperature == nil || *p.Temperature > 0 }

// reusable: req may be answered from the cache.
func reusable(req *SubmitRequest) bool { return !sampled(req.Params) || req.ReuseSampled }

// CheckReuse refuses what reuse cannot do.
func CheckReuse(req *SubmitRequest) error {
	switch {
	case !req.Reuse && req.ReuseSampled:
		return job.Fieldf("reuse_sampled", "goes with reuse: true")
	case req.Reuse && req.Index != nil:
		return job.Fieldf("reuse", "an embedding job that writes an index runs every record; leave reuse out")
	}
	return nil
}

// findReused looks each record of req up in the cache: the records that
// have a live succeeded result there (by index into req.Records), whether
// or not the job may reuse it (reusable).
func (s *Service) findReused(ctx context.Context, req *SubmitRequest) (map[int]job.Record, error) {
	if !req.Reuse {
		return nil, nil
	}
	entries := make([]*cacheEntry, len(req.Records))
	keys := make([]string, len(req.Records))
	d := s.newDigester(req.Owner)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(reuseConcurrency)
	for i := range req.Records {
		g.Go(func() error {
			k, ok := d.key(gctx, req, req.Records[i])
			if !ok {
				return nil
			}
			keys[i] = k
			e, err := s.readEntry(gctx, s.cacheURI(req.Owner, k))
			entries[i] = e
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	req.keys = make(map[string]string, len(keys))
	for i, k := range keys {
		if k != "" {
			req.keys[req.Records[i].ID] = k
		}
	}
	byJob := map[string][]int{}
	for i, e := range entries {
		if e != nil {
			byJob[e.JobID] = append(byJob[e.JobID], i)
		}
	}
	found := map[int]job.Record{}
	for jobID, idx := range byJob {
		src, err := s.Store.GetJob(ctx, jobID)
		if errors.Is(err, store.ErrNotFound) {
			continue // expired
		}
		if err != nil {
			return nil, fmt.Errorf("reuse: load job %s: %w", jobID, err)
		}
		if src.Owner != req.Owner {
			continue // keys are per owner; a stray entry is never followed across
		}
		keys := make([]job.RecordKey, 0, len(idx))
		at := map[string][]int{}
		for _, i := range idx {
			e := entries[i]
			if _, dup := at[e.ID]; !dup {
				keys = append(keys, job.RecordKey{ID: e.ID, Ordinal: e.Ordinal})
			}
			at[e.ID] = append(at[e.ID], i)
		}
		for chunk := range slices.Chunk(keys, store.MaxGetRecords) {
			recs, err := s.Store.GetRecords(ctx, src.RecordSet(), chunk)
			if err != nil {
				return nil, fmt.Errorf("reuse: read results of %s: %w", jobID, err)
			}
			for _, r := range recs {
				if r.Status != job.RecordSucceeded || r.OutputRef != "" {
					continue // only a succeeded answer held in the item is copied
				}
				for _, i := range at[r.ID] {
					found[i] = r
				}
			}
		}
	}
	return found, nil
}

func (s *Service) readEntry(ctx context.Context, uri string) (*cacheEntry, error) {
	rc, err := s.Blobs.Open(ctx, uri, 0)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reuse: read %s: %w", uri, err)
	}
	defer rc.Close()
	var e cacheEntry
	if err := json.NewDecoder(io.LimitReader(rc, 4096)).Decode(&e); err != nil || e.JobID == "" {
		return nil, nil // a torn entry is a miss
	}
	return &e, nil
}

// writeEntries points the keys of j's records (req.Records, as stored) at
// j, but for those whose entry points at a live result (req.cached): the
// cache keeps the answer it has rather than one that may fail.
func (s *Service) writeEntries(ctx context.Context, req *SubmitRequest, j *job.Job) error {
	if !req.Reuse {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(reuseConcurrency)
	for i, in := range req.Records {
		key, keyed := req.keys[in.ID]
		if req.cached[in.ID] || !keyed {
			continue
		}
		ord := i
		if req.Ordinals != nil {
			ord = req.Ordinals[i]
		}
		g.Go(func() error {
			b, _ := json.Marshal(cacheEntry{JobID: j.ID, ID: in.ID, Ordinal: ord})
			uri := s.cacheURI(req.Owner, key)
			if _, err := s.Blobs.Put(gctx, uri, bytes.NewReader(b), "application/json"); err != nil {
				return fmt.Errorf("reuse: write %s: %w", uri, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// splitReused takes the records answered from the cache out of req: the
// others keep their positions as ordinals (so results list in the order
// the caller gave), and the reused ones become results of the new job,
// copied with cost 0 and the job they came from.
func splitReused(req *SubmitRequest, found map[int]job.Record, expires time.Time) []job.Record {
	if len(found) == 0 {
		return nil
	}
	ordinal := func(i int) int {
		if req.Ordinals != nil {
			return req.Ordinals[i]
		}
		return i
	}
	var keep []job.Input
	var ords []int
	reused := make([]job.Record, 0, len(found))
	for i, in := range req.Records {
		src, ok := found[i]
		if !ok {
			keep = append(keep, in)
			ords = append(ords, ordinal(i))
			continue
		}
		reused = append(reused, job.Record{ID: in.ID, Ordinal: ordinal(i), Status: job.RecordSucceeded,
			Output: src.Output, OutputJSON: src.OutputJSON, StopReason: src.StopReason, ContentType: src.ContentType,
			ExpiresAt: expires, Path: job.PathReused, ReusedFrom: src.JobID})
	}
	req.Records, req.Ordinals = keep, ords
	return reused
}

// reuseSaving is what the reused share of an estimate saves.
func reuseSaving(total float64, reused, n int) float64 {
	if n == 0 {
		return 0
	}
	return total * float64(reused) / float64(n)
}

// reuse answers what it can of req from the cache: req keeps the records
// still to send (its mode settled again for their number), and a job whose
// every record was answered is stored completed at once and returned.
func (s *Service) reuse(ctx context.Context, req *SubmitRequest) (*job.Job, error) {
	if err := CheckReuse(req); err != nil {
		return nil, err
	}
	found, err := s.findReused(ctx, req)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	if !reusable(req) {
		keepCached(req, found)
		return nil, nil
	}
	now := s.Clock.Now()
	if req.ID == "" {
		req.ID = job.NewID(now)
	}
	n := len(req.Records)
	hold := &job.Job{Mode: req.Mode, TTLDays: req.TTLDays, Deadline: req.Deadline}
	req.reused = splitReused(req, found, job.NewExpiresAt(hold, now))
	if len(req.Records) == 0 {
		return s.completeReused(ctx, req, n, now)
	}
	prov := s.Providers.Get(req.Provider)
	lim := s.limitsFor(prov, req.Model)
	m, _ := s.Models.LookupModel(req.Model)
	switch {
	case req.autoMode:
		if req.Mode, err = modeFor(m, job.ModeAuto, len(req.Records), lim, s.runsOnDemand(prov)); err != nil {
			return nil, err
		}
	case req.Mode == job.ModeBatch && len(req.Records) < lim.MinRecords:
		return nil, job.Fieldf("mode", "%d of the %d records were answered from earlier results (reuse), leaving %d, under %s's minimum of %d per job; use mode auto (the rest then run on demand)",
			len(req.reused), n, len(req.Records), lim.Title, lim.MinRecords)
	}
	return nil, nil
}

// StoreReused writes the records req answered from the cache as results
// of j and counts them on it, before j is stored (so none is missing once
// it is visible); every path that creates a submit's job calls it.
func (r *SubmitRequest) StoreReused(ctx context.Context, w store.Writer, j *job.Job) error {
	if len(r.reused) == 0 {
		return nil
	}
	if err := putReused(ctx, w, j, r.reused); err != nil {
		return err
	}
	j.Reused = len(r.reused)
	return nil
}

func putReused(ctx context.Context, w store.Writer, j *job.Job, recs []job.Record) error {
	for i := range recs {
		recs[i].JobID = j.ID
	}
	if err := w.Put(ctx, j.RecordSet(), recs); err != nil {
		return fmt.Errorf("store reused results of %s: %w", j.ID, err)
	}
	return nil
}

// keepCached: a job that may not reuse the found results (sampled) is not
// answered from them, but their entries keep pointing at them.
func keepCached(req *SubmitRequest, found map[int]job.Record) {
	req.cached = map[string]bool{}
	for i := range found {
		req.cached[req.Records[i].ID] = true
	}
}

// ReuseChunk is reuse for a file job j (see transfer): ins are some of its
// records (ids settled) at input ordinals ords. Those answered from the
// cache are stored as results of j at once (cost 0, reused_from); the
// others' keys are pointed at j, as an inline submit's are. It reports
// which of ins were reused; the caller sends only the others.
func (s *Service) ReuseChunk(ctx context.Context, req SubmitRequest, j *job.Job, ins []job.Input, ords []int) ([]bool, error) {
	req.Records, req.Ordinals, req.Reuse = ins, ords, true
	found, err := s.findReused(ctx, &req)
	if err != nil {
		return nil, err
	}
	reused := make([]bool, len(ins))
	if reusable(&req) {
		for i := range found {
			reused[i] = true
		}
		if recs := splitReused(&req, found, j.ExpiresAt); len(recs) > 0 {
			if err := putReused(ctx, s.Results, j, recs); err != nil {
				return nil, err
			}
		}
	} else {
		keepCached(&req, found)
	}
	return reused, s.writeEntries(ctx, &req, j)
}

// completeReused stores a job whose n records were all answered from the
// cache: completed at once, cost 0, nothing sent.
func (s *Service) completeReused(ctx context.Context, req *SubmitRequest, n int, now time.Time) (*job.Job, error) {
	j := &job.Job{
		ID: req.ID, Owner: req.Owner, Name: req.Name, Provider: req.Provider, Model: req.Model, Mode: req.Mode,
		Status: job.StatusCompleted, ProviderStatus: "Reused", Shards: job.ShardsFor(n), InputOrder: true,
		TTLDays: req.TTLDays, CreatedAt: now, UpdatedAt: now, CompletedAt: now, ExpiresAt: job.ExpiresAt(now, req.TTLDays),
		Reused: n, Params: &req.Params, RetryOf: req.RetryOf, Notify: req.Notify, Pipeline: req.Pipeline,
	}
	j.RecordsExpireAt = j.ExpiresAt
	j.AddWarning(req.Warnings...)
	for i := range req.reused {
		req.reused[i].ExpiresAt = j.ExpiresAt
	}
	if err := req.StoreReused(ctx, s.Results, j); err != nil {
		return nil, err
	}
	if err := s.Store.CreateJob(ctx, j); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("%w: %s", service.ErrJobExists, j.ID)
		}
		return nil, fmt.Errorf("store job %s: %w", j.ID, err)
	}
	s.Telemetry.PublishCompleted(ctx, j)
	return j, nil
}
