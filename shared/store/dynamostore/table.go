package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableClient is the part of the DynamoDB API CreateTable calls.
type TableClient interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

var _ TableClient = (*dynamodb.Client)(nil)

// tableActiveTimeout bounds the wait for a new table and its indexes.
const tableActiveTimeout = 5 * time.Minute

// CreateTable creates the single table (on-demand, both GSIs projecting ALL),
// waits until it and its indexes are active, and enables TTL on expiresAt.
// It is for tests and local use; in AWS the CDK stack owns the table. An
// existing table is left as it is (after waiting for it to be active).
func CreateTable(ctx context.Context, client TableClient, name string) error {
	s := types.ScalarAttributeTypeS
	gsi := func(index, pk, sk string) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{
			IndexName: aws.String(index),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}
	}
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPK), AttributeType: s},
			{AttributeName: aws.String(attrSK), AttributeType: s},
			{AttributeName: aws.String(attrGSI1PK), AttributeType: s},
			{AttributeName: aws.String(attrGSI1SK), AttributeType: s},
			{AttributeName: aws.String(attrGSI2PK), AttributeType: s},
			{AttributeName: aws.String(attrGSI2SK), AttributeType: s},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrSK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			gsi(IndexOwner, attrGSI1PK, attrGSI1SK),
			gsi(IndexInFlight, attrGSI2PK, attrGSI2SK),
		},
	})
	var inUse *types.ResourceInUseException
	existed := errors.As(err, &inUse)
	if err != nil && !existed {
		return fmt.Errorf("dynamostore: create table %s: %w", name, err)
	}
	if err := waitActive(ctx, client, name); err != nil {
		return err
	}
	if existed {
		return nil
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(TTLAttribute),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamostore: enable TTL on %s: %w", name, err)
	}
	return nil
}

// waitActive polls until the table and every GSI are ACTIVE: the SDK's
// TableExistsWaiter looks at the table status only.
func waitActive(ctx context.Context, client TableClient, name string) error {
	ctx, cancel := context.WithTimeout(ctx, tableActiveTimeout)
	defer cancel()
	delay := 100 * time.Millisecond
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("dynamostore: describe table %s: %w", name, err)
		}
		if active(out.Table) {
			return nil
		}
		if err := sleep(ctx, delay); err != nil {
			return fmt.Errorf("dynamostore: wait for table %s to be active: %w", name, err)
		}
		delay = min(2*delay, 5*time.Second)
	}
}

func active(t *types.TableDescription) bool {
	if t == nil || t.TableStatus != types.TableStatusActive {
		return false
	}
	for _, g := range t.GlobalSecondaryIndexes {
		if g.IndexStatus != "" && g.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}
