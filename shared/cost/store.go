package cost

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

// jobIndexes are the GSIs a job item is projected into (owner listing and
// the sparse in-flight listing): each write of a job item writes them too.
const jobIndexes = 2

// Store counts, for every call of the store it wraps, the DynamoDB units the
// DynamoDB adapter would use: item sizes come from that adapter's encoding.
// Reads of job items are counted strongly consistent and Query pages of
// records too (the stricter reading); GSI queries are eventually consistent.
type Store struct {
	store.Store
	M *Meter
	// Today, when set, also counts the record writes and reads as the
	// per-record layout (one item per record, before 2026-12-03) bills
	// them, so that one run prices both layouts.
	Today *Meter

	mu sync.Mutex
	// pages are the page items of packed sets written so far, by job and
	// sort key: a listing reads its ranges' items whole.
	pages map[string]map[string]dynamostore.PageItem
}

func (s *Store) jobWrite(j *job.Job) {
	if n, err := dynamostore.JobItemSize(j); err == nil {
		s.M.Write("job", n, jobIndexes)
	}
}

func (s *Store) jobRead(j *job.Job, eventual bool) {
	if n, err := dynamostore.JobItemSize(j); err == nil {
		s.M.Read(n, eventual)
	}
}

// CreateJob is one conditional PutItem of the job item.
func (s *Store) CreateJob(ctx context.Context, j *job.Job) error {
	err := s.Store.CreateJob(ctx, j)
	if err == nil {
		s.jobWrite(j)
	}
	return err
}

// GetJob is one GetItem.
func (s *Store) GetJob(ctx context.Context, id string) (*job.Job, error) {
	j, err := s.Store.GetJob(ctx, id)
	if err == nil {
		s.jobRead(j, false)
	} else {
		s.M.Read(0, false)
	}
	return j, err
}

// UpdateJob is a GetItem and, unless fn changes nothing, a conditional PutItem.
func (s *Store) UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error) {
	changed := false
	j, err := s.Store.UpdateJob(ctx, id, func(j *job.Job) error {
		s.jobRead(j, false)
		err := fn(j)
		changed = err == nil
		return err
	})
	if err == nil && changed {
		s.jobWrite(j)
	}
	return j, err
}

// ListJobs is a Query page on the owner index.
func (s *Store) ListJobs(ctx context.Context, owner string, q store.JobQuery) ([]*job.Job, string, error) {
	jobs, next, err := s.Store.ListJobs(ctx, owner, q)
	s.M.Read(jobsSize(jobs), true)
	return jobs, next, err
}

// ListInFlight is a Query page on the in-flight index.
func (s *Store) ListInFlight(ctx context.Context, provider string, before time.Time, limit int) ([]*job.Job, error) {
	jobs, err := s.Store.ListInFlight(ctx, provider, before, limit)
	s.M.Read(jobsSize(jobs), true)
	return jobs, err
}

func jobsSize(jobs []*job.Job) int {
	n := 0
	for _, j := range jobs {
		if sz, err := dynamostore.JobItemSize(j); err == nil {
			n += sz
		}
	}
	return n
}

// PutRecords is BatchWriteItem: of a packed set (job.RecordSet.Packed) one
// write per page item and its companion, by their sizes, and one S3 PUT of
// the pages the call keeps in object storage (dynamostore.PageItems, as the
// deployed store writes them: with object storage, app/aws.go); otherwise
// one write per record item.
func (s *Store) PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	err := s.Store.PutRecords(ctx, rs, recs)
	if err != nil {
		return err
	}
	if rs.Packed && rs.ByOrdinal {
		items, err := dynamostore.PageItems(rs, recs, true)
		if err != nil {
			return fmt.Errorf("cost: page items: %w", err)
		}
		s.mu.Lock()
		if s.pages == nil {
			s.pages = map[string]map[string]dynamostore.PageItem{}
		}
		if s.pages[rs.JobID] == nil {
			s.pages[rs.JobID] = map[string]dynamostore.PageItem{}
		}
		for _, it := range items {
			s.pages[rs.JobID][it.SK] = it
		}
		s.mu.Unlock()
		var object int64
		for _, it := range items {
			s.M.Write("record", it.Size, 0)
			object += int64(it.Object)
		}
		if object > 0 {
			s.M.RecordPut(1, object)
		}
	} else {
		writePerRecord(s.M, rs, recs)
	}
	if s.Today != nil {
		writePerRecord(s.Today, rs, recs)
	}
	return nil
}

func writePerRecord(m *Meter, rs job.RecordSet, recs []job.Record) {
	for i := range recs {
		if n, err := dynamostore.RecordItemSize(rs, &recs[i]); err == nil {
			m.Write("record", n, 0)
		}
	}
}

// ListRecords is, for a packed set, one Query per range the listing reads
// (those of the records listed) and its request has not read yet (see
// store.ReadCache), each range's items read whole: its pages, or its
// companions for failed records, and one ranged S3 GET per page of the
// range kept in object storage; otherwise a Query
// page of every shard, merged (see dynamostore.ListRecords), each shard's
// query reading its share of the page.
func (s *Store) ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	recs, next, err := s.Store.ListRecords(ctx, rs, q)
	if err != nil {
		return recs, next, err
	}
	if rs.Packed && rs.ByOrdinal {
		ranges := map[int]bool{}
		for _, r := range recs {
			ranges[dynamostore.PageRange(r.Ordinal)] = true
		}
		s.mu.Lock()
		size, objects, objectBytes := map[int]int{}, map[int]int64{}, map[int]int64{}
		for _, it := range s.pages[rs.JobID] {
			if ranges[it.Range] && it.Companion == (q.Status == job.RecordFailed) {
				size[it.Range] += it.Size
				if it.Object > 0 {
					objects[it.Range]++
					objectBytes[it.Range] += int64(it.Object)
				}
			}
		}
		s.mu.Unlock()
		cache := store.ReadCacheOf(ctx)
		for r := range ranges {
			// A range a request read already comes from its cache.
			key := fmt.Sprintf("cost/%s/%v/%d", rs.JobID, q.Status == job.RecordFailed, r)
			if _, ok := cache.Load(key); ok {
				continue
			}
			cache.Store(key, true)
			s.M.ReadKind("record", size[r], false)
			if objects[r] > 0 {
				s.M.RecordGet(objects[r], objectBytes[r])
			}
		}
		if len(ranges) == 0 {
			s.M.ReadKind("record", 0, false)
		}
	} else {
		readPerRecord(s.M, rs, recs)
	}
	if s.Today != nil {
		readPerRecord(s.Today, rs, recs)
	}
	return recs, next, nil
}

func readPerRecord(m *Meter, rs job.RecordSet, recs []job.Record) {
	n := 0
	for i := range recs {
		if sz, err := dynamostore.RecordItemSize(rs, &recs[i]); err == nil {
			n += sz
		}
	}
	shards := max(rs.Shards, 1)
	for range shards {
		m.ReadKind("record", n/shards, false)
	}
}

// RefOwner is one GetItem of a small item.
func (s *Store) RefOwner(ctx context.Context, provider, ref string) (string, int, error) {
	s.M.Read(0, false)
	return s.Store.RefOwner(ctx, provider, ref)
}

// Slot is one GetItem of a small item.
func (s *Store) Slot(ctx context.Context, key string) (string, error) {
	s.M.Read(0, false)
	return s.Store.Slot(ctx, key)
}

// SwapSlot is one conditional PutItem of a small item.
func (s *Store) SwapSlot(ctx context.Context, key, old, next string) (bool, error) {
	s.M.Write("slot", 0, 0)
	return s.Store.SwapSlot(ctx, key, old, next)
}
