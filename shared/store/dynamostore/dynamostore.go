// Package dynamostore is the store.Store adapter over one DynamoDB table (a
// single-table design): jobs under JOB#<id>/META, results packed many to an
// item in pages over JOB#<id>#<shard>/PG#… with failed-record companions
// FX#… (pages.go; jobs created since 2026-12-03), or one item per record at
// JOB#<id>#<shard>/ORD#<ordinal>#<recordId> (round-robin by input ordinal;
// jobs stored before ordinals: JOB#<id>#<hash shard>/REC#<recordId>), owner
// listing on GSI1, in-flight listing on the sparse GSI2, TTL on expiresAt.
package dynamostore

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
)

var _ store.Store = (*Store)(nil)

// Client is the part of the DynamoDB API the store calls; *dynamodb.Client
// satisfies it, and tests wrap it to inject faults.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

var _ Client = (*dynamodb.Client)(nil)

// Defaults for retries. BatchWriteItem's UnprocessedItems are throttling in
// disguise, so they back off like the SDK does (capped exponential, full jitter).
const (
	DefaultBackoffBase       = 25 * time.Millisecond
	DefaultBackoffCap        = 2 * time.Second
	DefaultMaxBatchAttempts  = 10
	DefaultMaxUpdateAttempts = 32

	// maxQueryScan caps the items one Query of queryN reads (a page is at
	// most 1 MB whatever the Limit).
	maxQueryScan = 1000
	// batchSize is BatchWriteItem's limit per request.
	batchSize = 25
	// Optimistic-lock losers wait only briefly: the winner is already done.
	conflictBackoffBase = 2 * time.Millisecond
	conflictBackoffCap  = 100 * time.Millisecond
)

// Option configures a Store.
type Option func(*Store)

// WithNow sets the clock used for expiry filtering and UpdatedAt stamps (tests).
func WithNow(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithBackoff sets the base and cap of the backoff between BatchWriteItem retries.
func WithBackoff(base, capDelay time.Duration) Option {
	return func(s *Store) { s.backoffBase, s.backoffCap = base, capDelay }
}

// WithMaxBatchAttempts sets how many BatchWriteItem calls one chunk of 25
// records gets (the first included) before PutRecords returns ErrUnprocessed.
func WithMaxBatchAttempts(n int) Option { return func(s *Store) { s.maxBatchAttempts = max(1, n) } }

// WithMaxUpdateAttempts sets how many read-modify-write rounds UpdateJob tries
// before it returns ErrConflict.
func WithMaxUpdateAttempts(n int) Option { return func(s *Store) { s.maxUpdateAttempts = max(1, n) } }

// Store is the DynamoDB adapter. It is safe for concurrent use.
type Store struct {
	db                Client
	table             string
	now               func() time.Time
	backoffBase       time.Duration
	backoffCap        time.Duration
	maxBatchAttempts  int
	maxUpdateAttempts int
	// objs and objsBase keep the documents of jobs too large for an item (see overflow.go).
	objs     Objects
	objsBase string
	// spillPages: pages go to objs too when that is cheaper (pages.go).
	spillPages bool
}

// New returns a Store over table.
func New(client Client, table string, opts ...Option) *Store {
	s := &Store{
		db:                client,
		table:             table,
		now:               time.Now,
		backoffBase:       DefaultBackoffBase,
		backoffCap:        DefaultBackoffCap,
		maxBatchAttempts:  DefaultMaxBatchAttempts,
		maxUpdateAttempts: DefaultMaxUpdateAttempts,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// liveFilter hides expired items (DynamoDB deletes them lazily, hours to
// days late). It uses the names #exp and the value :now (see liveValues).
const liveFilter = "(attribute_not_exists(#exp) OR #exp > :now)"

func (s *Store) nowValue() types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(s.now().Unix(), 10)}
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// CreateJob implements store.Store.
func (s *Store) CreateJob(ctx context.Context, j *job.Job) error {
	now := s.now()
	if j.CreatedAt.IsZero() {
		j.CreatedAt = now
	}
	if j.UpdatedAt.IsZero() {
		j.UpdatedAt = j.CreatedAt
	}
	j.Version = 1
	item, err := encodeJob(j)
	if err != nil {
		return err
	}
	token := stampWriter(item)
	ref, err := s.spill(ctx, j, item, token)
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table),
		Item:      item,
		// An expired job that TTL has not swept yet does not hold its id.
		ConditionExpression:       aws.String("attribute_not_exists(PK) OR #exp <= :now"),
		ExpressionAttributeNames:  map[string]string{"#exp": attrExpires},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": s.nowValue()},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if !s.landed(ctx, j.ID, token) {
			s.dropRef(ctx, ref)
			return fmt.Errorf("create job %s: %w", j.ID, store.ErrExists)
		}
		err = nil
	}
	if err != nil {
		s.dropRef(ctx, ref)
		return fmt.Errorf("dynamostore: create job %s: %w", j.ID, err)
	}
	return s.putRefs(ctx, nil, j)
}

// GetJob implements store.Store. It reads consistently: callers act on the
// job right after writing it.
func (s *Store) GetJob(ctx context.Context, id string) (*job.Job, error) {
	for attempt := 1; ; attempt++ {
		item, err := s.getJobItem(ctx, id)
		if err != nil {
			return nil, err
		}
		j, err := s.decode(ctx, item)
		if errors.Is(err, errRefGone) && attempt < s.maxUpdateAttempts {
			continue // a write replaced the document between the two reads
		}
		return j, err
	}
}

func (s *Store) getJobItem(ctx context.Context, id string) (map[string]types.AttributeValue, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            map[string]types.AttributeValue{attrPK: str(jobPK(id)), attrSK: str(skJob)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: get job %s: %w", id, err)
	}
	if out.Item == nil || !s.live(out.Item) {
		return nil, fmt.Errorf("job %s: %w", id, store.ErrNotFound)
	}
	return out.Item, nil
}

// live applies the expiry rule to an item read by key (GetItem has no filter).
func (s *Store) live(item map[string]types.AttributeValue) bool {
	n, ok := item[attrExpires].(*types.AttributeValueMemberN)
	if !ok {
		return true
	}
	exp, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return true
	}
	return storeutil.Live(exp, s.now())
}

// UpdateJob implements store.Store with optimistic locking on version:
// consistent read, fn, conditional put; a lost race rereads and reapplies fn.
func (s *Store) UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error) {
	for attempt := 1; ; attempt++ {
		item, err := s.getJobItem(ctx, id)
		if err != nil {
			return nil, err
		}
		cur, work, err := storeutil.Mutate(id, s.now(), func() (*job.Job, error) { return s.decode(ctx, item) }, fn)
		if errors.Is(err, errRefGone) && attempt < s.maxUpdateAttempts {
			continue
		}
		if err != nil {
			return cur, err
		}
		newItem, err := encodeJob(work)
		if err != nil {
			return nil, err
		}
		written, err := decodeJob(newItem) // what a read will return, before the document may move
		if err != nil {
			return nil, err
		}
		if err := s.putRefs(ctx, cur, work); err != nil {
			return nil, err
		}
		token := stampWriter(newItem)
		ref, err := s.spill(ctx, work, newItem, token)
		if err != nil {
			return nil, err
		}
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName:                 aws.String(s.table),
			Item:                      newItem,
			ConditionExpression:       aws.String("#v = :v"),
			ExpressionAttributeNames:  map[string]string{"#v": attrVersion},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(cur.Version, 10)}},
		})
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) && s.landed(ctx, id, token) {
			err = nil
		}
		if err != nil {
			s.dropRef(ctx, ref)
		}
		if errors.As(err, &ccf) {
			if attempt >= s.maxUpdateAttempts {
				return nil, fmt.Errorf("update job %s: lost %d races: %w", id, attempt, store.ErrConflict)
			}
			if err := sleep(ctx, fullJitter(conflictBackoffBase, conflictBackoffCap, attempt)); err != nil {
				return nil, fmt.Errorf("update job %s: %w", id, err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("dynamostore: update job %s: %w", id, err)
		}
		if prev := jobRef(item); prev != ref {
			s.dropRef(ctx, prev)
		}
		return written, nil
	}
}

// A put the SDK retried (a 5xx or a broken connection after DynamoDB had
// written it) fails its condition on the retry, against its own write: read
// as a lost race, the mutator ran twice and a count went up by two. Each
// put carries a fresh writer token, and a failed condition whose item holds
// ours is our write, landed.
const attrWriter = "writer"

func stampWriter(item map[string]types.AttributeValue) string {
	token := crand.Text()
	item[attrWriter] = str(token)
	return token
}

// landed reports whether the job item now holds the put stamped token.
func (s *Store) landed(ctx context.Context, id, token string) bool {
	item, err := s.getJobItem(ctx, id)
	if err != nil {
		return false
	}
	w, ok := item[attrWriter].(*types.AttributeValueMemberS)
	return ok && w.Value == token
}

// decodeListed decodes a job item a query returned; a spilled document
// replaced since the query is read again through GetJob.
func (s *Store) decodeListed(ctx context.Context, item map[string]types.AttributeValue) (*job.Job, error) {
	j, err := s.decode(ctx, item)
	if !errors.Is(err, errRefGone) {
		return j, err
	}
	pk, _ := item[attrPK].(*types.AttributeValueMemberS)
	if pk == nil {
		return nil, fmt.Errorf("dynamostore: a job item without %s", attrPK)
	}
	j, err = s.GetJob(ctx, strings.TrimPrefix(pk.Value, "JOB#"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // expired since the query: left out, as the query would now
	}
	return j, err
}

// jobCursor carries GSI1's LastEvaluatedKey (all our keys are strings).
type jobCursor struct {
	Key map[string]string `json:"k"`
}

// ListJobs implements store.Store.
func (s *Store) ListJobs(ctx context.Context, owner string, q store.JobQuery) ([]*job.Job, string, error) {
	limit := storeutil.PageLimit(q.Limit)
	pk := ownerPK(owner)
	var start map[string]types.AttributeValue
	if q.Cursor != "" {
		var c jobCursor
		if err := storeutil.DecodeCursor(q.Cursor, &c); err != nil {
			return nil, "", err
		}
		// The cursor's partition must be this owner's: a cursor never opens
		// another owner's listing.
		if !validKey(c.Key, attrPK, attrSK, attrGSI1PK, attrGSI1SK) || c.Key[attrGSI1PK] != pk || c.Key[attrSK] != skJob {
			return nil, "", fmt.Errorf("%w: not a cursor of this listing", store.ErrBadCursor)
		}
		start = toKey(c.Key)
	}
	filter := liveFilter
	names := map[string]string{"#exp": attrExpires}
	values := map[string]types.AttributeValue{":pk": str(pk), ":now": s.nowValue()}
	if q.Status != "" {
		filter += " AND #st = :st"
		names["#st"] = attrStatus
		values[":st"] = str(string(q.Status))
	}
	// One item past the page tells whether another page exists.
	items, err := s.queryN(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(IndexOwner),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		FilterExpression:          aws.String(filter),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(false),
	}, start, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("dynamostore: list jobs of %s: %w", owner, err)
	}
	jobs := make([]*job.Job, 0, min(len(items), limit))
	for _, it := range items[:min(len(items), limit)] {
		j, err := s.decodeListed(ctx, it)
		if err != nil {
			return nil, "", err
		}
		if j != nil {
			jobs = append(jobs, j)
		}
	}
	if len(items) <= limit {
		return jobs, "", nil
	}
	next, err := storeutil.EncodeCursor(jobCursor{Key: keyOf(items[limit-1], attrPK, attrSK, attrGSI1PK, attrGSI1SK)})
	return jobs, next, err
}

// ListInFlight implements store.Store over the sparse GSI2, oldest first.
func (s *Store) ListInFlight(ctx context.Context, provider string, updatedBefore time.Time, limit int) ([]*job.Job, error) {
	// GSI2SK is "<updatedAt>#<id>": every key of a job updated strictly before
	// updatedBefore sorts below the bare timestamp, and none at or after it.
	items, err := s.queryN(ctx, &dynamodb.QueryInput{
		TableName:                aws.String(s.table),
		IndexName:                aws.String(IndexInFlight),
		KeyConditionExpression:   aws.String("GSI2PK = :pk AND GSI2SK < :before"),
		FilterExpression:         aws.String(liveFilter),
		ExpressionAttributeNames: map[string]string{"#exp": attrExpires},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(inFlightPK(provider)), ":before": str(sortTime(updatedBefore)), ":now": s.nowValue(),
		},
		ScanIndexForward: aws.Bool(true),
	}, nil, storeutil.PageLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("dynamostore: list in-flight %s jobs: %w", provider, err)
	}
	jobs := make([]*job.Job, 0, len(items))
	for _, it := range items {
		j, err := s.decodeListed(ctx, it)
		if err != nil {
			return nil, err
		}
		if j != nil {
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// queryN collects up to want items that pass the query's filter. Limit
// applies before FilterExpression, so a page may come back short (expired or
// filtered items) while more data follows: keep querying until the page is
// full or the data ends. Each short page doubles the items the next call
// reads (up to maxQueryScan), so a filter that keeps one item in k costs
// about log2(k) calls more, not k per item; items past want are dropped.
func (s *Store) queryN(ctx context.Context, in *dynamodb.QueryInput, start map[string]types.AttributeValue, want int) ([]map[string]types.AttributeValue, error) {
	var items []map[string]types.AttributeValue
	for scan := want; len(items) < want; scan = min(2*scan, maxQueryScan) {
		q := *in
		q.ExclusiveStartKey = start
		q.Limit = aws.Int32(int32(max(scan, want-len(items))))
		out, err := s.db.Query(ctx, &q)
		if err != nil {
			return nil, err
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		start = out.LastEvaluatedKey
	}
	return items[:min(len(items), want)], nil
}

// validKey reports whether k has exactly the given non-empty attributes.
func validKey(k map[string]string, names ...string) bool {
	if len(k) != len(names) {
		return false
	}
	for _, n := range names {
		if k[n] == "" {
			return false
		}
	}
	return true
}

// keyOf extracts the (string) key attributes of an item for a cursor: the
// item itself, not LastEvaluatedKey, marks where the page ended.
func keyOf(item map[string]types.AttributeValue, names ...string) map[string]string {
	k := make(map[string]string, len(names))
	for _, n := range names {
		if v, ok := item[n].(*types.AttributeValueMemberS); ok {
			k[n] = v.Value
		}
	}
	return k
}

func toKey(k map[string]string) map[string]types.AttributeValue {
	m := make(map[string]types.AttributeValue, len(k))
	for n, v := range k {
		m[n] = str(v)
	}
	return m
}

// fullJitter is the delay before retry number attempt (1-based): uniform in
// [0, min(capDelay, base*2^(attempt-1))], AWS's "full jitter", which spreads
// competing clients best.
func fullJitter(base, capDelay time.Duration, attempt int) time.Duration {
	if base <= 0 || capDelay <= 0 {
		return 0
	}
	d := capDelay
	if shift := attempt - 1; shift < 32 && base<<shift > 0 && base<<shift < capDelay {
		d = base << shift
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
