package dynamostore

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/store"
)

var _ store.Snapshots = (*Store)(nil)

// A snapshot is FACTS#<key> / META (version, updatedAt, part count) plus its
// gzip'd document in FACTS#<key> / PART#<version>#<n> items of at most
// snapshotPartBytes each: a DynamoDB item holds at most 400 KB, and an
// account's facts (200 models with profiles and quotas) may pass that before
// compression. Parts are written first, then META moves to their version
// (conditional on the version read), then the old version's parts are
// deleted; a reader follows META, so it never sees a half-written version.
const (
	snapshotPartBytes = 350_000
	attrSnapData      = "data"
	attrSnapAt        = "updatedAt"
	attrSnapWriter    = "writer"
)

func factsPK(key string) string { return "FACTS#" + key }

// partSK names part n of a version as one writer wrote it: two writers racing
// for the same version never overwrite each other's parts.
func partSK(version int64, writer string, n int) string {
	return fmt.Sprintf("%s%s#%04d", versionPrefix(version), writer, n)
}

func versionPrefix(version int64) string { return fmt.Sprintf("PART#%012d#", version) }

// GetSnapshot implements store.Snapshots.
func (s *Store) GetSnapshot(ctx context.Context, key string) (store.Snapshot, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            map[string]types.AttributeValue{attrPK: str(factsPK(key)), attrSK: str(skJob)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("dynamostore: snapshot %s: %w", key, err)
	}
	if out.Item == nil {
		return store.Snapshot{}, store.ErrNotFound
	}
	version, err1 := numAttr(out.Item[attrVersion])
	parts, err2 := numAttr(out.Item[attrParts])
	at, err3 := numAttr(out.Item[attrSnapAt])
	writer, _ := out.Item[attrSnapWriter].(*types.AttributeValueMemberS)
	if writer == nil {
		err3 = errors.Join(err3, errors.New("the writer attribute is missing"))
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		return store.Snapshot{}, fmt.Errorf("dynamostore: snapshot %s: %w", key, err)
	}
	var zipped bytes.Buffer
	for n := range int(parts) {
		p, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:      aws.String(s.table),
			Key:            map[string]types.AttributeValue{attrPK: str(factsPK(key)), attrSK: str(partSK(version, writer.Value, n))},
			ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return store.Snapshot{}, fmt.Errorf("dynamostore: snapshot %s part %d: %w", key, n, err)
		}
		b, ok := p.Item[attrSnapData].(*types.AttributeValueMemberB)
		if !ok {
			return store.Snapshot{}, fmt.Errorf("dynamostore: snapshot %s version %d: part %d is missing", key, version, n)
		}
		zipped.Write(b.Value)
	}
	zr, err := gzip.NewReader(&zipped)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("dynamostore: snapshot %s: %w", key, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("dynamostore: snapshot %s: %w", key, err)
	}
	return store.Snapshot{Version: version, UpdatedAt: time.Unix(0, at).UTC(), Data: data}, nil
}

// PutSnapshot implements store.Snapshots.
func (s *Store) PutSnapshot(ctx context.Context, key string, prev int64, data []byte, at time.Time) (int64, error) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	if _, err := zw.Write(data); err != nil {
		return 0, fmt.Errorf("dynamostore: put snapshot %s: %w", key, err)
	}
	if err := zw.Close(); err != nil {
		return 0, fmt.Errorf("dynamostore: put snapshot %s: %w", key, err)
	}
	next := prev + 1
	writer := rand.Text()[:12]
	chunks := split(zipped.Bytes(), snapshotPartBytes)
	for n, c := range chunks {
		// Unconditional: a racing writer of the same version writes its own
		// parts here, and only the META winner's are read.
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(s.table),
			Item: map[string]types.AttributeValue{
				attrPK: str(factsPK(key)), attrSK: str(partSK(next, writer, n)), attrSnapData: &types.AttributeValueMemberB{Value: c},
			},
		})
		if err != nil {
			return 0, fmt.Errorf("dynamostore: put snapshot %s part %d: %w", key, n, err)
		}
	}
	put := &dynamodb.PutItemInput{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			attrPK: str(factsPK(key)), attrSK: str(skJob),
			attrVersion: numV(next), attrParts: numV(int64(len(chunks))), attrSnapAt: numV(at.UnixNano()), attrSnapWriter: str(writer),
		},
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}
	if prev > 0 {
		put.ConditionExpression = aws.String("#v = :prev")
		put.ExpressionAttributeNames = map[string]string{"#v": attrVersion}
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": numV(prev)}
	}
	_, err := s.db.PutItem(ctx, put)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		s.dropParts(ctx, key, func(sk string) bool { return strings.HasPrefix(sk, versionPrefix(next)+writer+"#") })
		return 0, fmt.Errorf("dynamostore: put snapshot %s over version %d: %w", key, prev, store.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("dynamostore: put snapshot %s: %w", key, err)
	}
	// Older versions go; so do parts of this version other writers lost with.
	mine := versionPrefix(next) + writer + "#"
	s.dropParts(ctx, key, func(sk string) bool { return sk < versionPrefix(next+1) && !strings.HasPrefix(sk, mine) })
	return next, nil
}

// dropParts deletes the parts drop picks, best effort: a leftover is never
// read (META names the current version and writer) and the next put retries.
// It pages through every part (a Query page holds at most 1 MB, read before
// the projection: two or three parts) and retries unprocessed deletes.
func (s *Store) dropParts(ctx context.Context, key string, drop func(sk string) bool) {
	var start map[string]types.AttributeValue
	for {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:              aws.String(s.table),
			KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :old)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": str(factsPK(key)), ":old": str("PART#"),
			},
			ProjectionExpression: aws.String("PK, SK"),
			ExclusiveStartKey:    start,
		})
		if err != nil {
			return
		}
		var dels []types.WriteRequest
		for _, it := range out.Items {
			sk, _ := it[attrSK].(*types.AttributeValueMemberS)
			if sk == nil || !drop(sk.Value) {
				continue
			}
			dels = append(dels, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{attrPK: it[attrPK], attrSK: it[attrSK]}}})
		}
		for len(dels) > 0 {
			n := min(len(dels), batchSize)
			if s.writeBatch(ctx, dels[:n], len(dels)-n) != nil {
				return
			}
			dels = dels[n:]
		}
		if len(out.LastEvaluatedKey) == 0 {
			return
		}
		start = out.LastEvaluatedKey
	}
}

func split(b []byte, size int) [][]byte {
	var out [][]byte
	for len(b) > size {
		out = append(out, b[:size])
		b = b[size:]
	}
	return append(out, b)
}

func numV(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func numAttr(v types.AttributeValue) (int64, error) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, errors.New("a number attribute is missing")
	}
	return strconv.ParseInt(n.Value, 10, 64)
}
