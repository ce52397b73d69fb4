package job

import (
	"fmt"
	"regexp"
	"time"
)

// Limits of the Bedrock batch service and of this product. Bedrock's are the
// documented defaults per model and region.
const (
	BedrockMinRecords    = 100
	BedrockMaxRecords    = 50_000 // per provider job and per file
	BedrockMaxFileBytes  = 1 << 30
	BedrockMinTimeoutHrs = 24
	BedrockMaxTimeoutHrs = 168

	MinTTLDays     = 1
	MaxTTLDays     = 365
	DefaultTTLDays = 7

	DefaultMaxTokens = 1024
	MaxRecordIDLen   = 64

	// MaxInlineOutputBytes keeps a record item under DynamoDB's 400 KB item limit
	// with room for the other attributes; bigger outputs go to object storage.
	MaxInlineOutputBytes = 350 * 1024

	DefaultPageSize = 100
	MaxPageSize     = 500
)

var recordIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidRecordID reports whether id fits Bedrock's recordId and Anthropic's custom_id.
func ValidRecordID(id string) bool { return recordIDPattern.MatchString(id) }

// RecordIDPattern is the documented pattern for record ids.
const RecordIDPattern = `^[A-Za-z0-9_-]{1,64}$`

// ExpiresAt is the TTL instant for a job created at now that lives ttlDays.
func ExpiresAt(now time.Time, ttlDays int) time.Time {
	return now.Add(time.Duration(ttlDays) * 24 * time.Hour).Truncate(time.Second)
}

// FieldError is bad user input: the field, what is wrong, and the limit.
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }

// Fieldf builds a FieldError.
func Fieldf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
