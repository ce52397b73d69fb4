package local_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/s3vectors"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/mcpbatch/mcpbatch/shared/app/awsreports"
	"github.com/mcpbatch/mcpbatch/shared/app/local"
	"github.com/mcpbatch/mcpbatch/shared/blob"
	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/index"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
	"github.com/mcpbatch/mcpbatch/shared/sim"
	simvectors "github.com/mcpbatch/mcpbatch/shared/sim/s3vectors"
	"github.com/mcpbatch/mcpbatch/shared/store/dynamostore"
)

// A wiring is one set of adapters the end-to-end flows run on: make dev's
// (SQLite, a folder, the S3 Vectors simulator, the notifications file) or the
// deployed one's (DynamoDB, S3, S3 Vectors, SNS) on moto_server. The
// providers' simulators are the same on both.
type wiring struct {
	name string
	// adapters builds one suite's adapters; nil is make dev's. now is the
	// store's clock (Options.StoreNow).
	adapters func(t *testing.T, now func() time.Time) local.Adapters
}

var (
	sqliteWiring = wiring{name: "sqlite"}
	awsWiring    = wiring{name: "aws", adapters: awsAdapters}
	// wirings is what every end-to-end flow runs on (flows_test.go).
	wirings = []wiring{sqliteWiring, awsWiring}
)

// options fills o.Adapters for this wiring and records that the flow running
// as t built a suite on it (flows_test.go checks every flow did, on each).
func (w wiring) options(t *testing.T, o local.Options) local.Options {
	t.Helper()
	built(t, w)
	if w.adapters != nil {
		o.Adapters = w.adapters(t, o.StoreNow)
	}
	return o
}

// One moto_server serves the package's AWS wirings, started by the first one.
var (
	motoOnce sync.Once
	motoSrv  *motoserver.Server
	motoErr  error
	motoSeq  atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	motoSrv.Stop()
	os.Exit(code)
}

func moto(t *testing.T) *motoserver.Server {
	t.Helper()
	motoOnce.Do(func() { motoSrv, motoErr = motoserver.Start() })
	if motoErr != nil {
		t.Fatalf("the AWS wiring needs moto_server: %v", motoErr)
	}
	return motoSrv
}

// awsAdapters are the deployed adapters on moto_server: a fresh table, topic
// and queue per suite, the suite's bucket and vector bucket (created once;
// job and index names keep suites apart).
func awsAdapters(t *testing.T, now func() time.Time) local.Adapters {
	t.Helper()
	srv := moto(t)
	ctx := t.Context()
	cfg := srv.Config()
	endpoint := aws.String(srv.Endpoint)
	n := motoSeq.Add(1)

	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = endpoint })
	table := fmt.Sprintf("mcpbatch-e2e-%d", n)
	if err := dynamostore.CreateTable(ctx, db, table); err != nil {
		t.Fatal(err)
	}
	var opts []dynamostore.Option
	if now != nil {
		opts = append(opts, dynamostore.WithNow(now))
	}
	st := dynamostore.New(&atomicPuts{Client: db}, table, opts...)

	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = endpoint; o.UsePathStyle = true })
	bucket, _, _ := blob.ParseURI(local.Bucket + "/")
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		var owned *s3types.BucketAlreadyOwnedByYou
		if !errors.As(err, &owned) {
			t.Fatalf("create bucket %s: %v", bucket, err)
		}
	}

	topic := newSNSTopic(t, cfg, endpoint, n)
	objects := s3blob.New(s3c, s3blob.Options{})
	return local.Adapters{Store: st, Blobs: objects, Links: objects,
		Vectors: newMotoVectors(t, cfg, endpoint), VectorBucket: fmt.Sprintf("mcpbatch-e2e-vectors-%d", n),
		Topic: topic, TopicARN: topic.arn}
}

// atomicPuts serialises PutItem calls: moto's threaded server does not check
// a put's condition and write atomically as DynamoDB does (two puts on one
// version both succeed), which loses updates the store's lock would keep.
type atomicPuts struct {
	dynamostore.Client
	mu sync.Mutex
}

func (a *atomicPuts) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.Client.PutItem(ctx, in, optFns...)
}

// snsTopic is the deployed notifier (awsreports.SNSNotifier) on a moto
// topic, with an SQS queue subscribed so a test reads what subscribers get.
type snsTopic struct {
	*awsreports.SNSNotifier
	arn   string
	sqs   *sqs.Client
	queue string

	mu    sync.Mutex
	notes []local.Notification
}

func newSNSTopic(t *testing.T, cfg aws.Config, endpoint *string, n int64) *snsTopic {
	t.Helper()
	ctx := t.Context()
	sn := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = endpoint })
	tp, err := sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(fmt.Sprintf("mcpbatch-e2e-%d", n))})
	if err != nil {
		t.Fatal(err)
	}
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = endpoint })
	qu, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("mcpbatch-e2e-%d", n))})
	if err != nil {
		t.Fatal(err)
	}
	qarn := fmt.Sprintf("arn:aws:sqs:%s:%s:mcpbatch-e2e-%d", cfg.Region, sim.DefaultAccount, n)
	if _, err := sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: tp.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(qarn)}); err != nil {
		t.Fatal(err)
	}
	return &snsTopic{SNSNotifier: &awsreports.SNSNotifier{Client: sn}, arn: *tp.TopicArn, sqs: q, queue: *qu.QueueUrl}
}

// Read returns every notification delivered so far, as FileNotifier.Read does.
func (s *snsTopic) Read() ([]local.Notification, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx := context.Background()
	for {
		out, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.queue), MaxNumberOfMessages: 10})
		if err != nil {
			return nil, fmt.Errorf("read the topic's queue: %w", err)
		}
		if len(out.Messages) == 0 {
			return append([]local.Notification(nil), s.notes...), nil
		}
		for _, m := range out.Messages {
			// An SNS envelope (no raw delivery): https://docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html (2026-12).
			var env struct {
				TopicArn, Subject, Message, Timestamp string
				MessageAttributes                     map[string]struct{ Type, Value string }
			}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil {
				return nil, fmt.Errorf("decode SNS envelope: %w", err)
			}
			note := local.Notification{Topic: env.TopicArn, Subject: env.Subject, Message: env.Message, Time: env.Timestamp}
			for k, v := range env.MessageAttributes {
				if note.Attributes == nil {
					note.Attributes = map[string]string{}
				}
				note.Attributes[k] = v.Value
			}
			s.notes = append(s.notes, note)
			if _, err := s.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.queue), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return nil, err
			}
		}
	}
}

// notifications reads what the suite's topic carried, on either wiring.
func notifications(t *testing.T, l *local.Suite) []local.Notification {
	t.Helper()
	r, ok := l.Reports.Notifier.(interface {
		Read() ([]local.Notification, error)
	})
	if !ok {
		t.Fatalf("notifier %T cannot be read back", l.Reports.Notifier)
	}
	notes, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	return notes
}

// motoVectors is the S3 Vectors adapter's API on moto_server, except
// QueryVectors: moto 5.2.1 does not serve it (404; its s3vectors urls.py
// lists no QueryVectors). Every write goes to moto and to an S3 Vectors
// simulator, and only QueryVectors is answered by the simulator, so every
// other call (buckets, indexes, PutVectors, GetVectors, ListVectors,
// DeleteVectors) is moto's.
type motoVectors struct {
	*s3vectors.Client                    // moto
	sim               index.S3VectorsAPI // the mirror QueryVectors reads
}

func newMotoVectors(t *testing.T, cfg aws.Config, endpoint *string) *motoVectors {
	t.Helper()
	vs := &simvectors.S3VectorsSim{Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Region: sim.DefaultRegion, Account: sim.DefaultAccount}
	url, err := vs.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vs.Close() })
	moto := s3vectors.NewFromConfig(cfg, func(o *s3vectors.Options) { o.BaseEndpoint = endpoint })
	mirror := s3vectors.NewFromConfig(cfg, func(o *s3vectors.Options) { o.BaseEndpoint = aws.String(url) })
	return &motoVectors{Client: moto, sim: mirror}
}

// both sends a write to moto, then mirrors it to the simulator; the answer is moto's.
func both[In, Out any](ctx context.Context, in In, moto, mirror func(context.Context, In, ...func(*s3vectors.Options)) (Out, error)) (Out, error) {
	out, err := moto(ctx, in)
	if err != nil {
		return out, err
	}
	if _, merr := mirror(ctx, in); merr != nil {
		return out, fmt.Errorf("s3vectors mirror (for QueryVectors): %w", merr)
	}
	return out, nil
}

func (m *motoVectors) CreateVectorBucket(ctx context.Context, in *s3vectors.CreateVectorBucketInput, _ ...func(*s3vectors.Options)) (*s3vectors.CreateVectorBucketOutput, error) {
	return both(ctx, in, m.Client.CreateVectorBucket, m.sim.CreateVectorBucket)
}

func (m *motoVectors) CreateIndex(ctx context.Context, in *s3vectors.CreateIndexInput, _ ...func(*s3vectors.Options)) (*s3vectors.CreateIndexOutput, error) {
	return both(ctx, in, m.Client.CreateIndex, m.sim.CreateIndex)
}

func (m *motoVectors) DeleteIndex(ctx context.Context, in *s3vectors.DeleteIndexInput, _ ...func(*s3vectors.Options)) (*s3vectors.DeleteIndexOutput, error) {
	return both(ctx, in, m.Client.DeleteIndex, m.sim.DeleteIndex)
}

func (m *motoVectors) PutVectors(ctx context.Context, in *s3vectors.PutVectorsInput, _ ...func(*s3vectors.Options)) (*s3vectors.PutVectorsOutput, error) {
	return both(ctx, in, m.Client.PutVectors, m.sim.PutVectors)
}

func (m *motoVectors) DeleteVectors(ctx context.Context, in *s3vectors.DeleteVectorsInput, _ ...func(*s3vectors.Options)) (*s3vectors.DeleteVectorsOutput, error) {
	return both(ctx, in, m.Client.DeleteVectors, m.sim.DeleteVectors)
}

// QueryVectors is the one call moto lacks.
func (m *motoVectors) QueryVectors(ctx context.Context, in *s3vectors.QueryVectorsInput, opts ...func(*s3vectors.Options)) (*s3vectors.QueryVectorsOutput, error) {
	return m.sim.QueryVectors(ctx, in, opts...)
}
