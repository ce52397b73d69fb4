package dynamostore

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// ItemSize is an item's size as DynamoDB bills it: attribute names plus
// values, strings and binaries by length, numbers by about half their digits
// plus one, maps and lists 3 bytes plus 1 per element plus the elements
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html, as of 2026-12-01).
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

func numberSize(s string) int {
	digits := len(strings.Trim(strings.NewReplacer("-", "", ".", "").Replace(s), "0"))
	return (max(digits, 1)+1)/2 + 1
}

// RecordItemSize is the billed size of a record's item as PutRecords writes it.
func RecordItemSize(rs job.RecordSet, r *job.Record) (int, error) {
	item, err := encodeRecord(rs, r)
	if err != nil {
		return 0, err
	}
	return ItemSize(item), nil
}

// JobItemSize is the billed size of a job's item.
func JobItemSize(j *job.Job) (int, error) {
	item, err := encodeJob(j)
	if err != nil {
		return 0, err
	}
	return ItemSize(item), nil
}
