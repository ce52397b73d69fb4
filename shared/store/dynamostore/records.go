package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// packed reports whether rs keeps its records in pages (pages.go); other
// sets keep one item per record.
func packed(rs job.RecordSet) bool { return rs.Packed && rs.ByOrdinal }

// PutRecords implements store.Store: BatchWriteItem 25 at a time, retrying
// UnprocessedItems with capped exponential backoff and full jitter. Past the
// cap it returns an error wrapping store.ErrUnprocessed; since every write is
// a keyed overwrite, calling again with the same records is safe.
func (s *Store) PutRecords(ctx context.Context, rs job.RecordSet, recs []job.Record) error {
	if err := storeutil.CheckRecords(rs, recs); err != nil {
		return fmt.Errorf("put records of job %s: %w", rs.JobID, err)
	}
	recs = storeutil.Dedupe(recs)
	rs.Shards = storeutil.Shards(rs.Shards)
	if packed(rs) {
		return s.putPages(ctx, rs, recs)
	}
	reqs := make([]types.WriteRequest, 0, len(recs))
	for i := range recs {
		item, err := encodeRecord(rs, &recs[i])
		if err != nil {
			return fmt.Errorf("put records of job %s: %w", rs.JobID, err)
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for start := 0; start < len(reqs); start += batchSize {
		end := min(start+batchSize, len(reqs))
		if err := s.writeBatch(ctx, reqs[start:end], len(reqs)-end); err != nil {
			return fmt.Errorf("put records of job %s: %w", rs.JobID, err)
		}
	}
	return nil
}

// writeBatch writes one BatchWriteItem chunk; after is how many records of
// the call come behind it, so an error can say how many were left in all.
func (s *Store) writeBatch(ctx context.Context, pending []types.WriteRequest, after int) error {
	for attempt := 1; ; attempt++ {
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{s.table: pending},
		})
		if err != nil {
			return fmt.Errorf("dynamostore: batch write (%d records left): %w", len(pending)+after, err)
		}
		pending = out.UnprocessedItems[s.table]
		if len(pending) == 0 {
			return nil
		}
		if attempt >= s.maxBatchAttempts {
			return fmt.Errorf("%w: %d records left (%d still unprocessed after %d attempts, %d not tried)",
				store.ErrUnprocessed, len(pending)+after, len(pending), attempt, after)
		}
		if err := sleep(ctx, fullJitter(s.backoffBase, s.backoffCap, attempt)); err != nil {
			return fmt.Errorf("dynamostore: batch write backoff (%d records left): %w", len(pending)+after, err)
		}
	}
}

// recordCursor is the sort key of a page's last record: every shard
// resumes after it, so a cursor is one key whatever the shard count.
type recordCursor struct {
	Job   string `json:"j"`
	After string `json:"a"`
}

// shardRun is one shard's part of a listing: items read and not yet merged,
// the sort key the next read starts after, whether the shard has more.
type shardRun struct {
	items []map[string]types.AttributeValue
	sks   []string
	after string
	more  bool
	// n is how many items the next read asks for; it doubles with every
	// read, so a sparse shard (a status filter) costs few round trips.
	n int
}

// ListRecords implements store.Store: a merge of the shards by sort key. A
// ByOrdinal set's keys are ORD#<ordinal, 10 digits>#<id>, so the merge is
// input order; an older set's are REC#<id>, so it lists by id. Each shard is
// read from the cursor's key in chunks of about its share of the page, all
// shards at once, and refilled only when the merge has taken all it read;
// a page reads at most about limit + 3 × shards items, in one query per
// shard when the ordinals are dense (BenchmarkListRecordsPage).
func (s *Store) ListRecords(ctx context.Context, rs job.RecordSet, q store.RecordQuery) ([]job.Record, string, error) {
	if packed(rs) {
		return s.listPages(ctx, rs, q)
	}
	limit := storeutil.PageLimit(q.Limit)
	shards := storeutil.Shards(rs.Shards)
	prefix := recordPrefix(rs)
	after := prefix
	if q.Cursor != "" {
		var c recordCursor
		if err := storeutil.DecodeCursor(q.Cursor, &c); err != nil {
			return nil, "", err
		}
		if c.Job != rs.JobID || len(c.After) <= len(prefix) || !strings.HasPrefix(c.After, prefix) {
			return nil, "", fmt.Errorf("%w: not a cursor of this listing", store.ErrBadCursor)
		}
		after = c.After
	}
	filter := liveFilter
	names := map[string]string{"#exp": attrExpires}
	values := map[string]types.AttributeValue{":hi": str(prefixEnd(prefix)), ":now": s.nowValue()}
	if q.Status != "" {
		filter += " AND #st = :st"
		names["#st"] = attrStatus
		values[":st"] = str(string(q.Status))
	}
	read := func(shard int, r *shardRun) error {
		ask := r.n
		if r.after != prefix {
			ask++ // the start key itself comes back too
		}
		vals := maps.Clone(values)
		vals[":pk"], vals[":lo"] = str(recordPK(rs.JobID, shard)), str(r.after)
		items, err := s.queryN(ctx, &dynamodb.QueryInput{
			TableName: aws.String(s.table),
			// BETWEEN takes the start key itself too: it is dropped below.
			KeyConditionExpression:    aws.String("PK = :pk AND SK BETWEEN :lo AND :hi"),
			FilterExpression:          aws.String(filter),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: vals,
			// A reader that saw the job finish must see every record it wrote.
			ConsistentRead: aws.Bool(true),
		}, nil, ask)
		if err != nil {
			return fmt.Errorf("dynamostore: list records of job %s shard %d: %w", rs.JobID, shard, err)
		}
		r.more = len(items) == ask
		r.n = min(2*r.n, limit+1)
		for _, it := range items {
			sk := keyOf(it, attrSK)[attrSK]
			if sk == r.after {
				continue
			}
			r.items, r.sks = append(r.items, it), append(r.sks, sk)
		}
		if len(r.sks) > 0 {
			r.after = r.sks[len(r.sks)-1]
		}
		return nil
	}
	runs := make([]shardRun, shards)
	for i := range runs {
		// One more than the shard's share, so that the first reads usually
		// settle the page (and whether another follows).
		runs[i] = shardRun{after: after, more: true, n: min((limit+1+shards-1)/shards+1, limit+1)}
	}
	var got []map[string]types.AttributeValue
	var lastSK string
	// One item past the page tells whether another page exists.
	for len(got) <= limit {
		if err := readEmpty(runs, read); err != nil {
			return nil, "", err
		}
		best := -1
		for i := range runs {
			if len(runs[i].sks) > 0 && (best < 0 || runs[i].sks[0] < runs[best].sks[0]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		r := &runs[best]
		if len(got) < limit {
			lastSK = r.sks[0]
		}
		got = append(got, r.items[0])
		r.items, r.sks = r.items[1:], r.sks[1:]
	}
	recs := make([]job.Record, 0, min(len(got), limit))
	for _, it := range got[:min(len(got), limit)] {
		r, err := decodeRecord(it)
		if err != nil {
			return nil, "", err
		}
		recs = append(recs, r)
	}
	if len(got) <= limit {
		return recs, "", nil
	}
	next, err := storeutil.EncodeCursor(recordCursor{Job: rs.JobID, After: lastSK})
	return recs, next, err
}

// readEmpty reads, concurrently, every shard the merge has taken all of
// and that may hold more: the merge needs each shard's next key.
func readEmpty(runs []shardRun, read func(shard int, r *shardRun) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(runs))
	for i := range runs {
		if r := &runs[i]; len(r.sks) == 0 && r.more {
			wg.Go(func() { errs[i] = read(i, r) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// GetRecords implements store.Store: one BatchGetItem (consistent reads),
// UnprocessedKeys retried with the same backoff as writes; expired items
// are left out like ListRecords leaves them out.
func (s *Store) GetRecords(ctx context.Context, rs job.RecordSet, want []job.RecordKey) ([]job.Record, error) {
	jobID := rs.JobID
	if len(want) > store.MaxGetRecords {
		return nil, fmt.Errorf("dynamostore: get %d records of job %s: at most %d", len(want), jobID, store.MaxGetRecords)
	}
	if packed(rs) {
		return s.getPages(ctx, rs, want)
	}
	rs.Shards = storeutil.Shards(rs.Shards)
	keys := make([]map[string]types.AttributeValue, 0, len(want))
	seen := map[string]bool{}
	for _, k := range want {
		sk := recordSK(rs, k)
		if seen[sk] {
			continue // BatchGetItem refuses duplicate keys
		}
		seen[sk] = true
		keys = append(keys, map[string]types.AttributeValue{attrPK: str(recordPK(jobID, rs.Shard(k))), attrSK: str(sk)})
	}
	now := s.now().Unix()
	var recs []job.Record
	for attempt := 1; len(keys) > 0; attempt++ {
		out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}})
		if err != nil {
			return nil, fmt.Errorf("dynamostore: get records of job %s: %w", jobID, err)
		}
		for _, it := range out.Responses[s.table] {
			r, err := decodeRecord(it)
			if err != nil {
				return nil, err
			}
			if !r.ExpiresAt.IsZero() && r.ExpiresAt.Unix() <= now {
				continue
			}
			recs = append(recs, r)
		}
		keys = out.UnprocessedKeys[s.table].Keys
		if len(keys) == 0 {
			break
		}
		if attempt >= s.maxBatchAttempts {
			return nil, fmt.Errorf("%w: %d record reads of job %s still unprocessed after %d attempts", store.ErrUnprocessed, len(keys), jobID, attempt)
		}
		if err := sleep(ctx, fullJitter(s.backoffBase, s.backoffCap, attempt)); err != nil {
			return nil, fmt.Errorf("dynamostore: get records backoff: %w", err)
		}
	}
	return recs, nil
}
