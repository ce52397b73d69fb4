package dynamostore

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

// PutRecords implements store.Store: BatchWriteItem 25 at a time, retrying
// UnprocessedItems with capped exponential backoff and full jitter. Past the
// cap it returns an error wrapping store.ErrUnprocessed; since every write is
// a keyed overwrite, calling again with the same records is safe.
func (s *Store) PutRecords(ctx context.Context, jobID string, shards int, recs []job.Record) error {
	if err := storeutil.CheckRecords(recs); err != nil {
		return fmt.Errorf("put records of job %s: %w", jobID, err)
	}
	recs = storeutil.Dedupe(recs)
	shards = storeutil.Shards(shards)
	reqs := make([]types.WriteRequest, 0, len(recs))
	for i := range recs {
		item, err := encodeRecord(jobID, shards, &recs[i])
		if err != nil {
			return fmt.Errorf("put records of job %s: %w", jobID, err)
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for start := 0; start < len(reqs); start += batchSize {
		end := min(start+batchSize, len(reqs))
		if err := s.writeBatch(ctx, reqs[start:end], len(reqs)-end); err != nil {
			return fmt.Errorf("put records of job %s: %w", jobID, err)
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

// recordCursor carries the shard and the table's LastEvaluatedKey in it.
type recordCursor struct {
	Shard int               `json:"s"`
	Key   map[string]string `json:"k"`
}

// ListRecords implements store.Store: shards 0..shards-1 in order, by record
// id within a shard (the sort key REC#<id>).
func (s *Store) ListRecords(ctx context.Context, jobID string, shards int, q store.RecordQuery) ([]job.Record, string, error) {
	limit := storeutil.PageLimit(q.Limit)
	shards = storeutil.Shards(shards)
	first := 0
	var start map[string]types.AttributeValue
	if q.Cursor != "" {
		var c recordCursor
		if err := storeutil.DecodeCursor(q.Cursor, &c); err != nil {
			return nil, "", err
		}
		// The cursor's partition must be a shard of this job.
		if c.Shard < 0 || c.Shard >= shards || !validKey(c.Key, attrPK, attrSK) ||
			c.Key[attrPK] != recordPK(jobID, c.Shard) || !strings.HasPrefix(c.Key[attrSK], skRecPrefix) {
			return nil, "", fmt.Errorf("%w: not a cursor of this listing", store.ErrBadCursor)
		}
		first, start = c.Shard, toKey(c.Key)
	}
	filter := liveFilter
	names := map[string]string{"#exp": attrExpires}
	statusValue := map[string]types.AttributeValue{}
	if q.Status != "" {
		filter += " AND #st = :st"
		names["#st"] = attrStatus
		statusValue[":st"] = str(string(q.Status))
	}
	type shardItem struct {
		shard int
		item  map[string]types.AttributeValue
	}
	var got []shardItem
	// One item past the page tells whether another page exists.
	for shard := first; shard < shards && len(got) <= limit; shard++ {
		values := map[string]types.AttributeValue{
			":pk": str(recordPK(jobID, shard)), ":rec": str(skRecPrefix), ":now": s.nowValue(),
		}
		for k, v := range statusValue {
			values[k] = v
		}
		items, err := s.queryN(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :rec)"),
			FilterExpression:          aws.String(filter),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: values,
			// A reader that saw the job finish must see every record it wrote.
			ConsistentRead: aws.Bool(true),
		}, start, limit+1-len(got))
		if err != nil {
			return nil, "", fmt.Errorf("dynamostore: list records of job %s shard %d: %w", jobID, shard, err)
		}
		for _, it := range items {
			got = append(got, shardItem{shard, it})
		}
		start = nil
	}
	recs := make([]job.Record, 0, min(len(got), limit))
	for _, g := range got[:min(len(got), limit)] {
		r, err := decodeRecord(g.item)
		if err != nil {
			return nil, "", err
		}
		recs = append(recs, r)
	}
	if len(got) <= limit {
		return recs, "", nil
	}
	last := got[limit-1]
	next, err := storeutil.EncodeCursor(recordCursor{Shard: last.shard, Key: keyOf(last.item, attrPK, attrSK)})
	return recs, next, err
}

// GetRecords implements store.Store: one BatchGetItem (consistent reads),
// UnprocessedKeys retried with the same backoff as writes; expired items
// are left out like ListRecords leaves them out.
func (s *Store) GetRecords(ctx context.Context, jobID string, shards int, ids []string) ([]job.Record, error) {
	if len(ids) > store.MaxGetRecords {
		return nil, fmt.Errorf("dynamostore: get %d records of job %s: at most %d", len(ids), jobID, store.MaxGetRecords)
	}
	shards = storeutil.Shards(shards)
	keys := make([]map[string]types.AttributeValue, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue // BatchGetItem refuses duplicate keys
		}
		seen[id] = true
		keys = append(keys, map[string]types.AttributeValue{attrPK: str(recordPK(jobID, job.RecordShard(id, shards))), attrSK: str(recordSK(id))})
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
