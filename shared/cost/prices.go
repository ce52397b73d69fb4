// Package cost counts what AWS would bill the suite itself for a run (Lambda
// requests and GB-seconds per function, DynamoDB read and write units by item
// size, S3 requests and bytes, EventBridge events, SNS publishes, CloudWatch
// Logs bytes) and prices it from one us-east-1 table. Adapters add to a Meter;
// the local suite wires metered adapters when asked (make cost).
package cost

// Prices are us-east-1 list prices in USD. Each names its source; all were
// read as of AsOf. Where a service has tiers, the first (smallest volume)
// tier is used: the stricter reading for a bill.
type Prices struct {
	AsOf string

	LambdaPerRequest float64 // $0.20 per 1M requests
	LambdaPerGBs     float64 // arm64, first 7.5 billion GB-s per month
	LambdaSource     string

	DynamoPerWRU float64 // on-demand write request unit
	DynamoPerRRU float64 // on-demand read request unit
	DynamoSource string

	S3PerPut     float64 // PUT, COPY, POST, LIST (S3 Standard)
	S3PerGet     float64 // GET, SELECT and all other requests
	S3PerGBMonth float64 // S3 Standard storage, first 50 TB
	S3Source     string

	EventsPerEvent float64 // custom events on a bus, per 64 KB chunk
	EventsSource   string

	SNSPerPublish float64 // standard topic publishes, per 64 KB chunk
	SNSSource     string

	LogsPerGB  float64 // CloudWatch Logs standard ingestion
	LogsSource string
}

// USEast1 is the table make cost prices with.
var USEast1 = Prices{
	AsOf: "2026-12-01",

	LambdaPerRequest: 0.20 / 1e6,
	LambdaPerGBs:     0.0000133334,
	LambdaSource:     "https://aws.amazon.com/lambda/pricing/",

	// The on-demand prices after the 2024-11-01 reduction.
	DynamoPerWRU: 0.625 / 1e6,
	DynamoPerRRU: 0.125 / 1e6,
	DynamoSource: "https://aws.amazon.com/dynamodb/pricing/on-demand/",

	S3PerPut:     0.005 / 1000,
	S3PerGet:     0.0004 / 1000,
	S3PerGBMonth: 0.023,
	S3Source:     "https://aws.amazon.com/s3/pricing/",

	EventsPerEvent: 1.00 / 1e6,
	EventsSource:   "https://aws.amazon.com/eventbridge/pricing/",

	SNSPerPublish: 0.50 / 1e6,
	SNSSource:     "https://aws.amazon.com/sns/pricing/",

	LogsPerGB:  0.50,
	LogsSource: "https://aws.amazon.com/cloudwatch/pricing/",
}

// Billing-unit rules (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html,
// https://aws.amazon.com/eventbridge/pricing/, https://aws.amazon.com/sns/pricing/, as of 2026-12-01).
const (
	// WriteUnitBytes: one write request unit per 1 KB of item, rounded up.
	WriteUnitBytes = 1024
	// ReadUnitBytes: one read request unit per 4 KB read, rounded up,
	// strongly consistent; an eventually consistent read is half that.
	ReadUnitBytes = 4096
	// EventChunkBytes: EventBridge bills each 64 KB chunk of an event as one event; SNS likewise.
	EventChunkBytes = 64 << 10
)

// WriteUnits is what writing one item of size bytes costs.
func WriteUnits(size int) float64 { return float64(max(1, ceilDiv(size, WriteUnitBytes))) }

// ReadUnits is what reading bytes (one item, or one Query page's items
// together) costs; eventual halves it.
func ReadUnits(size int, eventual bool) float64 {
	u := float64(max(1, ceilDiv(size, ReadUnitBytes)))
	if eventual {
		return u / 2
	}
	return u
}

// Chunks is how many 64 KB billing chunks an event or publish of size bytes is.
func Chunks(size int) int64 { return int64(max(1, ceilDiv(size, EventChunkBytes))) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }
