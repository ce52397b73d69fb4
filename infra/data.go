package main

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
)

// Key prefixes of the data bucket; shared/config and the service use the same ones.
const (
	PrefixInput   = "input/"           // JSONL the mcp function uploads for Bedrock to read
	PrefixOutput  = "output/"          // Bedrock writes <job>/<file>.jsonl.out and manifest.json.out here
	PrefixResults = "results/"         // record outputs too large for a DynamoDB item
	PrefixExports = "exports/"         // result exports handed out as presigned URLs
	PrefixUploads = "uploads/"         // input files clients PUT through create_upload's presigned URLs
	PrefixInputs  = "inputs/"          // input files operators copy in for submit_batch input_uri (kept until deleted)
	PrefixJobs    = config.PrefixJobs  // documents of jobs too large for a DynamoDB item
	PrefixCache   = config.PrefixCache // the result cache's index (submit reuse)
)

// Table key and index names; shared/store/dynamostore declares the same ones.
const (
	TableTTLAttribute = "expiresAt"
	IndexOwner        = "GSI1"
	IndexInFlight     = "GSI2"
)

const (
	// rawFileDays keeps the files read only while a job is in flight (Bedrock's raw output,
	// uploads before their submit, SageMaker's failures) well past its longest hold (168 h run
	// + ingest + a re-ingest after a fix); the parsed results live in DynamoDB.
	rawFileDays = 30
	// keptFileDays keeps the files a job item points to as long as the job can live: held in
	// flight, then its longest TTL (job.MaxLife), plus a day because DynamoDB deletes expired
	// items lazily: an object never disappears while an item that points to it is still served.
	// The caller's records in input/ are among them: retry_failed resubmits from them.
	keptFileDays = float64((job.MaxLife+24*time.Hour-1)/(24*time.Hour) + 1)
	// accessLogDays is how long S3 server access logs are kept for audits.
	accessLogDays = 90
)

// Data is the state of the suite: one table for jobs and results, one bucket for files.
type Data struct {
	// Scope is the construct that groups these resources (not embedded, so the Go
	// wrapper can never be handed to jsii as a construct by mistake).
	Scope      constructs.Construct
	Table      awsdynamodb.Table
	Bucket     awss3.Bucket
	AccessLogs awss3.Bucket
}

// NewData creates the table, the data bucket and its access-log bucket.
func NewData(scope constructs.Construct, id string) *Data {
	c := constructs.NewConstruct(scope, jsii.String(id))
	d := &Data{Scope: c}

	str := func(name string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
	}
	d.Table = awsdynamodb.NewTable(c, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: str("PK"),
		SortKey:      str("SK"),
		// On demand: traffic is bursty (an ingest writes 50,000 records, then nothing for hours).
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String(TableTTLAttribute),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption: awsdynamodb.TableEncryption_AWS_MANAGED,
		// Jobs and results outlive a stack replacement; delete the table by hand if you mean it.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	for _, gsi := range []string{IndexOwner, IndexInFlight} {
		d.Table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(gsi),
			PartitionKey:   str(gsi + "PK"),
			SortKey:        str(gsi + "SK"),
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		})
	}

	// The access-log bucket cannot log to itself (that would loop); it is private,
	// TLS-only and expires its logs.
	d.AccessLogs = awss3.NewBucket(c, jsii.String("AccessLogs"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		// Log delivery writes only to SSE-S3 targets.
		Encryption:      awss3.BucketEncryption_S3_MANAGED,
		ObjectOwnership: awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("expire-access-logs"),
			Expiration:                          awscdk.Duration_Days(jsii.Number(accessLogDays)),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})

	expire := func(id, prefix string, days float64) *awss3.LifecycleRule {
		return &awss3.LifecycleRule{
			Id:         jsii.String(id),
			Prefix:     jsii.String(prefix),
			Expiration: awscdk.Duration_Days(jsii.Number(days)),
		}
	}
	d.Bucket = awss3.NewBucket(c, jsii.String("Bucket"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		MinimumTLSVersion: jsii.Number(1.2),
		// SSE-S3, not KMS: Bedrock's service role and presigned downloads then need no key grants.
		Encryption:      awss3.BucketEncryption_S3_MANAGED,
		ObjectOwnership: awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		// Versioning off: every key embeds a unique job id and is written once, never
		// overwritten, and every prefix expires by lifecycle. Versions would only keep
		// multi-GB batch files alive past their expiry (noncurrent copies) and double the
		// bill; the durable record is the DynamoDB table, which has PITR.
		Versioned:              jsii.Bool(false),
		ServerAccessLogsBucket: d.AccessLogs,
		ServerAccessLogsPrefix: jsii.String("data/"),
		LifecycleRules: &[]*awss3.LifecycleRule{
			{
				// Interrupted streaming uploads (multipart) would otherwise be billed forever.
				Id:                                  jsii.String("abort-incomplete-multipart"),
				AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
			},
			expire("expire-input", PrefixInput, keptFileDays),
			expire("expire-output", PrefixOutput, rawFileDays),
			expire("expire-results", PrefixResults, keptFileDays),
			expire("expire-exports", PrefixExports, keptFileDays),
			// A large job's document: its item is gone by then (its TTL is at most MaxTTLDays).
			expire("expire-jobs", PrefixJobs, keptFileDays),
			expire("expire-uploads", PrefixUploads, rawFileDays),
			// An entry outlives the result it points at by at most this; a stale one is a miss.
			expire("expire-cache", PrefixCache, keptFileDays),
		},
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	return d
}

// TableIndexArns are the ARNs of the table's GSIs, named one by one (no index/* wildcard).
func (d *Data) TableIndexArns() []*string {
	return []*string{
		jsii.String(*d.Table.TableArn() + "/index/" + IndexOwner),
		jsii.String(*d.Table.TableArn() + "/index/" + IndexInFlight),
	}
}

// ObjectArns returns the object ARN pattern of each key prefix ("<bucket arn>/input/*").
func (d *Data) ObjectArns(prefixes ...string) []*string {
	out := make([]*string, 0, len(prefixes))
	for _, p := range prefixes {
		out = append(out, d.Bucket.ArnForObjects(jsii.String(p+"*")))
	}
	return out
}
