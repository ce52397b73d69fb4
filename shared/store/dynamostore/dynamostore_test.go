package dynamostore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
	"github.com/mcpbatch/mcpbatch/shared/store"
	"github.com/mcpbatch/mcpbatch/shared/store/internal/storeutil"
	"github.com/mcpbatch/mcpbatch/shared/store/storetest"
)

var srv *motoserver.Server

func TestMain(m *testing.M) { os.Exit(motoserver.Main(m, &srv)) }

var tableSeq atomic.Int64

// newTable creates a fresh table for one test and returns a client for it.
func newTable(t testing.TB) (*dynamodb.Client, string) {
	t.Helper()
	client := dynamodb.NewFromConfig(srv.Config(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(srv.Endpoint)
	})
	name := fmt.Sprintf("mcpbatch-test-%d-%d", os.Getpid(), tableSeq.Add(1))
	if err := CreateTable(t.Context(), client, name); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return client, name
}

// atomicPuts serialises PutItem calls. Real DynamoDB checks a condition and
// writes the item atomically; moto's threaded server does not (two puts
// conditioned on the same version were seen to both succeed, losing one of the
// 20 concurrent increments). Reads still interleave, so UpdateJob still races
// and retries here; only the check-and-set is made as atomic as in AWS.
type atomicPuts struct {
	Client
	mu sync.Mutex
}

func (a *atomicPuts) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.Client.PutItem(ctx, in, optFns...)
}

func TestContract(t *testing.T) {
	objs, base := newBucket(t)
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		client, table := newTable(t)
		return New(&atomicPuts{Client: client}, table, WithNow(now), WithOverflow(objs, base+table+"/"))
	})
}

// TestLargeJobNeedsObjects: without object storage, a job too large for an
// item is refused with both sizes named, before anything is written.
func TestLargeJobNeedsObjects(t *testing.T) {
	client, table := newTable(t)
	s := New(client, table)
	j := &job.Job{ID: job.NewID(time.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusQueued,
		Params: &job.Params{System: strings.Repeat("x", 10) + incompressibleText(900_000)}}
	err := s.CreateJob(t.Context(), j)
	if err == nil || !strings.Contains(err.Error(), "over DynamoDB's item limit of 409600") {
		t.Fatalf("CreateJob of a 900 KB job without object storage: %v, want the item limit named", err)
	}
	if _, err := s.GetJob(t.Context(), j.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetJob after the refusal: %v, want not found", err)
	}
}

// incompressibleText is random letters gzip cannot shrink below 400 KB.
func incompressibleText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = 'a' + b[i]%26
	}
	return string(b)
}

// newBucket makes an S3 bucket on the same moto_server for large jobs.
func newBucket(t testing.TB) (*s3blob.Store, string) {
	t.Helper()
	c := s3.NewFromConfig(srv.Config(), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(srv.Endpoint)
		o.UsePathStyle = true
	})
	name := fmt.Sprintf("mcpbatch-jobs-%d-%d", os.Getpid(), tableSeq.Add(1))
	if _, err := c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	return s3blob.New(c, s3blob.Options{}), "s3://" + name + "/jobs/"
}

func TestCreateTable(t *testing.T) {
	client, table := newTable(t)
	out, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	if out.Table.BillingModeSummary == nil || out.Table.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing mode %+v, want PAY_PER_REQUEST", out.Table.BillingModeSummary)
	}
	var gsis []string
	for _, g := range out.Table.GlobalSecondaryIndexes {
		gsis = append(gsis, aws.ToString(g.IndexName))
		if g.Projection == nil || g.Projection.ProjectionType != types.ProjectionTypeAll {
			t.Errorf("%s projects %+v, want ALL", aws.ToString(g.IndexName), g.Projection)
		}
	}
	slices.Sort(gsis)
	if !slices.Equal(gsis, []string{IndexOwner, IndexInFlight}) {
		t.Errorf("GSIs %v", gsis)
	}
	ttl, err := client.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatalf("DescribeTimeToLive: %v", err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || aws.ToString(d.AttributeName) != TTLAttribute ||
		d.TimeToLiveStatus != types.TimeToLiveStatusEnabled {
		t.Errorf("TTL %+v, want enabled on %s", d, TTLAttribute)
	}
	// Creating it again (a restarted `make dev`) is fine.
	if err := CreateTable(t.Context(), client, table); err != nil {
		t.Errorf("CreateTable on an existing table: %v", err)
	}
}

// TestItemLayout checks the stored shape the CDK stack and operators rely on:
// keys, sparse GSI2, TTL, status and version beside the job document,
// compressed long outputs.
func TestItemLayout(t *testing.T) {
	client, table := newTable(t)
	clock := storetest.NewClock(time.Date(2031, 1, 2, 3, 4, 5, 6, time.UTC))
	s := New(client, table, WithNow(clock.Now))
	ctx := t.Context()
	j := &job.Job{ID: job.NewID(clock.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusSubmitted,
		Shards: 4, InputOrder: true, CreatedAt: clock.Now(), ExpiresAt: job.ExpiresAt(clock.Now(), 7),
		Parts: []job.Part{{Index: 0, Name: "p1", Status: job.StatusSubmitted}}}
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	get := func(pk, sk string) map[string]types.AttributeValue {
		t.Helper()
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table),
			Key: map[string]types.AttributeValue{"PK": str(pk), "SK": str(sk)}})
		if err != nil || out.Item == nil {
			t.Fatalf("GetItem(%s, %s): %v, %v", pk, sk, err, out)
		}
		return out.Item
	}
	s2 := func(item map[string]types.AttributeValue, name string) string {
		v, _ := item[name].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	item := get("JOB#"+j.ID, "META")
	want := map[string]string{
		"GSI1PK": "OWNER#alice",
		"GSI1SK": "2031-01-02T03:04:05.000000006Z#" + j.ID,
		"GSI2PK": "INFLIGHT#bedrock",
		"GSI2SK": "2031-01-02T03:04:05.000000006Z#" + j.ID,
		"status": "submitted",
	}
	for k, v := range want {
		if got := s2(item, k); got != v {
			t.Errorf("job %s = %q, want %q", k, got, v)
		}
	}
	if n, ok := item["expiresAt"].(*types.AttributeValueMemberN); !ok || n.Value != fmt.Sprint(j.ExpiresAt.Unix()) {
		t.Errorf("expiresAt %#v, want N %d", item["expiresAt"], j.ExpiresAt.Unix())
	}
	if doc, err := storeutil.DecodeJob([]byte(s2(item, "job"))); err != nil || len(doc.Parts) != 1 || doc.Parts[0].Name != "p1" || doc.Owner != "alice" {
		t.Errorf("job document %q (%v), want the job with its part p1", s2(item, "job"), err)
	}
	for _, k := range []string{"owner", "parts", "shards"} {
		if _, ok := item[k]; ok {
			t.Errorf("job field %s stored as an attribute beside the document", k)
		}
	}

	if _, err := s.UpdateJob(ctx, j.ID, func(x *job.Job) error { x.Status = job.StatusCompleted; return nil }); err != nil {
		t.Fatalf("UpdateJob: %v", err)
	}
	item = get("JOB#"+j.ID, "META")
	for _, k := range []string{"GSI2PK", "GSI2SK"} {
		if _, ok := item[k]; ok {
			t.Errorf("terminal job still has %s", k)
		}
	}

	long := strings.Repeat("compress me ", 200)
	recs := []job.Record{
		{ID: "short", Ordinal: 0, Status: job.RecordSucceeded, Output: "hi", ExpiresAt: j.ExpiresAt},
		{ID: "long", Ordinal: 5, Status: job.RecordSucceeded, Output: long, ExpiresAt: j.ExpiresAt},
	}
	if err := s.PutRecords(ctx, j.RecordSet(), recs); err != nil {
		t.Fatalf("PutRecords: %v", err)
	}
	// Round-robin by ordinal, sorted by the zero-padded ordinal.
	short := get("JOB#"+j.ID+"#0", "ORD#0000000000#short")
	if !strings.Contains(s2(short, "rec"), `"output":"hi"`) || short["recGz"] != nil || short["expiresAt"] == nil {
		t.Errorf("short record %#v, want its whole record as plain JSON, and expiresAt", short)
	}
	if o, ok := short["ordinal"].(*types.AttributeValueMemberN); !ok || o.Value != "0" {
		t.Errorf("short record ordinal %#v, want the number 0", short["ordinal"])
	}
	longItem := get("JOB#"+j.ID+"#1", "ORD#0000000005#long")
	gz, ok := longItem["recGz"].(*types.AttributeValueMemberB)
	if !ok || len(gz.Value) >= len(long) || longItem["rec"] != nil {
		t.Errorf("long record %#v, want only its record as a smaller binary recGz", longItem)
	}
	// A job stored before ordinals keeps its records by id, hash-sharded.
	old := job.RecordSet{JobID: j.ID + "old", Shards: 4}
	if err := s.PutRecords(ctx, old, recs[:1]); err != nil {
		t.Fatalf("PutRecords: %v", err)
	}
	if it := get(fmt.Sprintf("JOB#%s#%d", old.JobID, old.Shard(job.RecordKey{ID: "short"})), "REC#short"); it["ordinal"] != nil || !strings.Contains(s2(it, "rec"), `"output":"hi"`) {
		t.Errorf("by-id record %#v, want REC#short without an ordinal", it)
	}
}

// faultyClient returns part of each BatchWriteItem request as UnprocessedItems
// (writing the rest for real) while failures remain; -1 fails for ever.
type faultyClient struct {
	Client
	mu       sync.Mutex
	failures int
	calls    int
	onBatch  func(call int)
}

func (f *faultyClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	f.mu.Lock()
	f.calls++
	call, fail := f.calls, f.failures != 0
	if f.failures > 0 {
		f.failures--
	}
	hook := f.onBatch
	f.mu.Unlock()
	if hook != nil {
		hook(call)
	}
	if !fail {
		return f.Client.BatchWriteItem(ctx, in, optFns...)
	}
	// Write the first half, hand back the second half as DynamoDB does under throttling.
	unprocessed := map[string][]types.WriteRequest{}
	written := map[string][]types.WriteRequest{}
	for table, reqs := range in.RequestItems {
		keep := len(reqs) / 2
		written[table] = reqs[:keep]
		unprocessed[table] = reqs[keep:]
		if keep == 0 {
			delete(written, table)
		}
	}
	if len(written) > 0 {
		out, err := f.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: written}, optFns...)
		if err != nil {
			return nil, err
		}
		for table, reqs := range out.UnprocessedItems {
			unprocessed[table] = append(unprocessed[table], reqs...)
		}
	}
	return &dynamodb.BatchWriteItemOutput{UnprocessedItems: unprocessed}, nil
}

func (f *faultyClient) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func testRecords(n int) []job.Record {
	recs := make([]job.Record, n)
	for i := range recs {
		recs[i] = job.Record{ID: fmt.Sprintf("r%03d", i), Ordinal: i, Status: job.RecordSucceeded, Output: fmt.Sprint(i)}
	}
	return recs
}

func byOrdinal(jobID string, shards int) job.RecordSet {
	return job.RecordSet{JobID: jobID, Shards: shards, ByOrdinal: true}
}

func countRecords(t *testing.T, s *Store, jobID string, shards int) int {
	t.Helper()
	n := 0
	q := store.RecordQuery{Limit: 500}
	for {
		recs, next, err := s.ListRecords(t.Context(), byOrdinal(jobID, shards), q)
		if err != nil {
			t.Fatalf("ListRecords: %v", err)
		}
		n += len(recs)
		if next == "" {
			return n
		}
		q.Cursor = next
	}
}

func TestPutRecordsRetriesUnprocessed(t *testing.T) {
	cases := []struct {
		name      string
		records   int
		failures  int
		wantCalls int
	}{
		// One chunk: 3 faulty calls halve the pending set, then a clean one.
		{"one-chunk", 20, 3, 4},
		// Two chunks (25 + 15): the faults hit the first chunk only.
		{"two-chunks", 40, 4, 6},
		{"no-faults", 60, 0, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client, table := newTable(t)
			f := &faultyClient{Client: client, failures: tc.failures}
			s := New(f, table, WithBackoff(time.Millisecond, 5*time.Millisecond), WithMaxBatchAttempts(10))
			jobID := job.NewID(time.Now())
			if err := s.PutRecords(t.Context(), byOrdinal(jobID, 3), testRecords(tc.records)); err != nil {
				t.Fatalf("PutRecords: %v", err)
			}
			if got := f.callCount(); got != tc.wantCalls {
				t.Errorf("%d BatchWriteItem calls, want %d", got, tc.wantCalls)
			}
			if got := countRecords(t, s, jobID, 3); got != tc.records {
				t.Errorf("%d records landed, want %d", got, tc.records)
			}
		})
	}
}

func TestPutRecordsGivesUp(t *testing.T) {
	client, table := newTable(t)
	const attempts = 4
	f := &faultyClient{Client: client, failures: -1}
	s := New(f, table, WithBackoff(time.Millisecond, 2*time.Millisecond), WithMaxBatchAttempts(attempts))
	jobID := job.NewID(time.Now())
	recs := testRecords(30) // chunks of 25 and 5
	err := s.PutRecords(t.Context(), byOrdinal(jobID, 2), recs)
	if !errors.Is(err, store.ErrUnprocessed) {
		t.Fatalf("PutRecords: %v, want ErrUnprocessed", err)
	}
	if got := f.callCount(); got != attempts {
		t.Errorf("%d BatchWriteItem calls, want %d (the cap, then stop)", got, attempts)
	}
	// 25 halved 4 times leaves 2 of the first chunk, plus the 5 never tried.
	if !strings.Contains(err.Error(), "7 records left") {
		t.Errorf("error %q does not say how many records were left", err)
	}
	if got := countRecords(t, s, jobID, 2); got >= len(recs) {
		t.Fatalf("%d records landed despite the fault", got)
	}

	// The job stays re-ingestable: the same batch lands once the fault is gone.
	f.mu.Lock()
	f.failures = 0
	f.mu.Unlock()
	if err := s.PutRecords(t.Context(), byOrdinal(jobID, 2), recs); err != nil {
		t.Fatalf("PutRecords retry: %v", err)
	}
	if got := countRecords(t, s, jobID, 2); got != len(recs) {
		t.Fatalf("%d records after the retry, want %d", got, len(recs))
	}
}

func TestPutRecordsHonoursContext(t *testing.T) {
	client, table := newTable(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := &faultyClient{Client: client, failures: -1, onBatch: func(int) { cancel() }}
	// A long backoff: only cancellation can end the wait quickly.
	s := New(f, table, WithBackoff(time.Minute, time.Minute), WithMaxBatchAttempts(100))
	start := time.Now()
	err := s.PutRecords(ctx, byOrdinal(job.NewID(time.Now()), 1), testRecords(10))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PutRecords: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("PutRecords took %v after cancellation", d)
	}
}

// racyClient makes every conditional put lose, as if another writer always won.
type racyClient struct {
	Client
	puts atomic.Int64
}

func (r *racyClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if strings.Contains(aws.ToString(in.ConditionExpression), ":v") {
		r.puts.Add(1)
		return nil, &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	return r.Client.PutItem(ctx, in, optFns...)
}

func TestUpdateJobConflict(t *testing.T) {
	client, table := newTable(t)
	r := &racyClient{Client: client}
	s := New(r, table, WithMaxUpdateAttempts(3))
	j := &job.Job{ID: job.NewID(time.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusSubmitted}
	if err := s.CreateJob(t.Context(), j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	calls := 0
	_, err := s.UpdateJob(t.Context(), j.ID, func(x *job.Job) error { calls++; x.Failed++; return nil })
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("UpdateJob: %v, want ErrConflict", err)
	}
	if calls != 3 || r.puts.Load() != 3 {
		t.Fatalf("mutator ran %d times, %d puts; want 3 each", calls, r.puts.Load())
	}
}

func TestFullJitter(t *testing.T) {
	cases := []struct {
		attempt int
		max     time.Duration
	}{{1, 10 * time.Millisecond}, {2, 20 * time.Millisecond}, {4, 80 * time.Millisecond}, {10, 100 * time.Millisecond}, {80, 100 * time.Millisecond}}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.attempt), func(t *testing.T) {
			for range 200 {
				if d := fullJitter(10*time.Millisecond, 100*time.Millisecond, tc.attempt); d < 0 || d > tc.max {
					t.Fatalf("delay %v outside [0, %v]", d, tc.max)
				}
			}
		})
	}
}

func TestSnapshotsContract(t *testing.T) {
	storetest.RunSnapshots(t, func(t *testing.T) store.Snapshots {
		client, table := newTable(t)
		return New(&atomicPuts{Client: client}, table)
	})
}

// TestSnapshotParts: a snapshot larger than an item is split into parts, and
// replacing it leaves only META and the new version's parts.
func TestSnapshotParts(t *testing.T) {
	client, table := newTable(t)
	s := New(client, table)
	big := make([]byte, 900_000)
	_, _ = rand.Read(big) // does not compress
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for prev := range int64(2) {
		if _, err := s.PutSnapshot(t.Context(), "acct", prev, big, at); err != nil {
			t.Fatal(err)
		}
	}
	out, err := client.Query(t.Context(), &dynamodb.QueryInput{
		TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "FACTS#acct"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var parts int
	for _, it := range out.Items {
		sk := it["SK"].(*types.AttributeValueMemberS).Value
		switch {
		case sk == "META":
		case strings.HasPrefix(sk, "PART#000000000002#"):
			parts++
			if n := len(it["data"].(*types.AttributeValueMemberB).Value); n > 350_000 {
				t.Errorf("part %s holds %d bytes", sk, n)
			}
		default:
			t.Errorf("left over: %s", sk)
		}
	}
	if parts < 2 {
		t.Errorf("%d parts: the document should not fit one item", parts)
	}
}

// retriedPuts sends every conditional put twice and answers the second try,
// as the SDK does when a put's answer is lost (a 5xx or a broken connection)
// after DynamoDB wrote it: the retry fails its condition against that write.
type retriedPuts struct{ Client }

func (r retriedPuts) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if in.ConditionExpression != nil {
		if _, err := r.Client.PutItem(ctx, in, optFns...); err != nil {
			return nil, err
		}
	}
	return r.Client.PutItem(ctx, in, optFns...)
}

// TestRetriedPutLandsOnce: a create or update whose put was retried after
// it landed is one write: not "already exists", not a mutator run twice.
func TestRetriedPutLandsOnce(t *testing.T) {
	client, table := newTable(t)
	s := New(retriedPuts{client}, table)
	j := &job.Job{ID: job.NewID(time.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusSubmitted, ExpiresAt: time.Now().Add(time.Hour)}
	if err := s.CreateJob(t.Context(), j); err != nil {
		t.Fatalf("CreateJob: %v, want the retried create to count as made", err)
	}
	calls := 0
	got, err := s.UpdateJob(t.Context(), j.ID, func(x *job.Job) error { calls++; x.Succeeded++; return nil })
	if err != nil {
		t.Fatalf("UpdateJob: %v", err)
	}
	if calls != 1 || got.Succeeded != 1 || got.Version != 2 {
		t.Fatalf("mutator ran %d times; succeeded %d, version %d; want 1, 1, 2", calls, got.Succeeded, got.Version)
	}
}

// TestLargeJobKeepsOneObject: each write of a large job replaces its
// object, so updates leave one object per job, not one per version.
func TestLargeJobKeepsOneObject(t *testing.T) {
	client, table := newTable(t)
	objs, base := newBucket(t)
	s := New(client, table, WithOverflow(objs, base))
	j := &job.Job{ID: job.NewID(time.Now()), Owner: "alice", Provider: job.ProviderBedrock, Status: job.StatusQueued,
		Params: &job.Params{System: incompressibleText(900_000)}}
	if err := s.CreateJob(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.UpdateJob(t.Context(), j.ID, func(x *job.Job) error { x.Succeeded++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	got, err := objs.List(t.Context(), base)
	if err != nil || len(got) != 1 {
		t.Fatalf("objects under %s after a create and 3 updates: %v, %v; want 1", base, got, err)
	}
}

// smallPages answers each Query with at most two items, as DynamoDB's 1 MB
// page (counted before projection) does for 350 KB snapshot parts.
type smallPages struct{ *faultyClient }

func (c smallPages) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	cp := *in
	cp.Limit = aws.Int32(2)
	return c.faultyClient.Query(ctx, &cp, optFns...)
}

// TestSnapshotPartsDroppedPastOnePage: replacing a snapshot whose parts fill
// several Query pages, with deletes handed back unprocessed, still leaves
// only META and the new version's parts.
func TestSnapshotPartsDroppedPastOnePage(t *testing.T) {
	client, table := newTable(t)
	fc := &faultyClient{Client: client}
	s := New(smallPages{fc}, table, WithBackoff(time.Millisecond, time.Millisecond))
	big := make([]byte, 2_000_000)
	_, _ = rand.Read(big) // does not compress: six parts
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if _, err := s.PutSnapshot(t.Context(), "acct", 0, big, at); err != nil {
		t.Fatal(err)
	}
	fc.mu.Lock()
	fc.failures = 2
	fc.mu.Unlock()
	if _, err := s.PutSnapshot(t.Context(), "acct", 1, big[:1000], at); err != nil {
		t.Fatal(err)
	}
	out, err := client.Query(t.Context(), &dynamodb.QueryInput{
		TableName: aws.String(table), KeyConditionExpression: aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "FACTS#acct"}},
		ProjectionExpression:      aws.String("PK, SK"),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if sk := it["SK"].(*types.AttributeValueMemberS).Value; sk != "META" && !strings.HasPrefix(sk, "PART#000000000002#") {
			t.Errorf("left over: %s", sk)
		}
	}
}
