package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/store"
)

// A REF#<provider>#<ref> item names the job part a provider Ref was attached
// to. It is written before the job item that holds the Ref: a crash between
// the two leaves an entry naming a part that has no Ref yet, which only that
// part's own lookup adopts, never another job's.
const (
	attrRefJob  = "jobId"
	attrRefPart = "part"
)

func refPK(provider, ref string) string { return "REF#" + provider + "#" + ref }

// putRefs records the owner of every Ref in next that prev (nil for a new
// job) does not hold; an entry already there (the first holder) is kept.
func (s *Store) putRefs(ctx context.Context, prev, next *job.Job) error {
	now := s.now()
	for _, p := range next.Parts {
		if p.Ref == "" || (prev != nil && p.Index < len(prev.Parts) && prev.Parts[p.Index].Ref == p.Ref) {
			continue
		}
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(s.table),
			Item: map[string]types.AttributeValue{
				attrPK: str(refPK(next.Provider, p.Ref)), attrSK: str(skJob),
				attrRefJob: str(next.ID), attrRefPart: &types.AttributeValueMemberN{Value: strconv.Itoa(p.Index)},
				attrExpires: &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(store.RefTTL).Unix(), 10)},
			},
			ConditionExpression:       aws.String("attribute_not_exists(PK) OR #exp <= :now OR (#job = :job AND #part = :part)"),
			ExpressionAttributeNames:  map[string]string{"#exp": attrExpires, "#job": attrRefJob, "#part": attrRefPart},
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": s.nowValue(), ":job": str(next.ID), ":part": &types.AttributeValueMemberN{Value: strconv.Itoa(p.Index)}},
		})
		var ccf *types.ConditionalCheckFailedException
		if err != nil && !errors.As(err, &ccf) {
			return fmt.Errorf("dynamostore: record ref %s of job %s: %w", p.Ref, next.ID, err)
		}
	}
	return nil
}

// RefOwner implements store.Store.
func (s *Store) RefOwner(ctx context.Context, provider, ref string) (string, int, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            map[string]types.AttributeValue{attrPK: str(refPK(provider, ref)), attrSK: str(skJob)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return "", 0, fmt.Errorf("dynamostore: ref %s of %s: %w", ref, provider, err)
	}
	if out.Item == nil || !s.live(out.Item) {
		return "", 0, fmt.Errorf("ref %s of %s: %w", ref, provider, store.ErrNotFound)
	}
	id, _ := out.Item[attrRefJob].(*types.AttributeValueMemberS)
	part, _ := out.Item[attrRefPart].(*types.AttributeValueMemberN)
	if id == nil || part == nil {
		return "", 0, fmt.Errorf("dynamostore: ref %s of %s: malformed item", ref, provider)
	}
	n, err := strconv.Atoi(part.Value)
	if err != nil {
		return "", 0, fmt.Errorf("dynamostore: ref %s of %s: part: %w", ref, provider, err)
	}
	return id.Value, n, nil
}

const attrSlotHolder = "holder"

func slotPK(key string) string { return "SLOT#" + key }

// Slot implements store.Store.
func (s *Store) Slot(ctx context.Context, key string) (string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            map[string]types.AttributeValue{attrPK: str(slotPK(key)), attrSK: str(skJob)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return "", fmt.Errorf("dynamostore: slot %s: %w", key, err)
	}
	h, _ := out.Item[attrSlotHolder].(*types.AttributeValueMemberS)
	if h == nil {
		return "", nil
	}
	return h.Value, nil
}

// SwapSlot implements store.Store. A free slot is an absent item or an empty
// holder; release writes the empty holder.
func (s *Store) SwapSlot(ctx context.Context, key, old, next string) (bool, error) {
	cond := "#h = :old"
	if old == "" {
		cond = "attribute_not_exists(PK) OR #h = :old"
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.table),
		Item:                      map[string]types.AttributeValue{attrPK: str(slotPK(key)), attrSK: str(skJob), attrSlotHolder: str(next)},
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#h": attrSlotHolder},
		ExpressionAttributeValues: map[string]types.AttributeValue{":old": str(old)},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("dynamostore: swap slot %s: %w", key, err)
	}
	return true, nil
}
