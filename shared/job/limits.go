package job

import (
	"fmt"
	"time"
	"unicode/utf8"
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
	// MinMaxTokens is the least max_tokens a record may ask for (the most is
	// the model's, from the catalog).
	MinMaxTokens = 1
	// MinTemperature / MaxTemperature bound temperature: the range Bedrock's
	// Converse inferenceConfig and the Anthropic Messages API document for
	// Claude (as of 2026-12).
	MinTemperature = 0.0
	MaxTemperature = 1.0
	// MaxJobNameLen is the longest submit name (a list_jobs label), in bytes.
	MaxJobNameLen = 128
	// MaxRecordIDLen is the longest caller record id, in characters. Providers
	// never see it: they get ProviderRecordID.
	MaxRecordIDLen = 256

	// MaxInlineOutputBytes keeps a record item under DynamoDB's 400 KB item limit
	// with room for the other attributes; bigger outputs go to object storage.
	MaxInlineOutputBytes = 350 * 1024

	MinPageSize     = 1
	DefaultPageSize = 100
	MaxPageSize     = 500
)

// ValidRecordID reports whether id fits Bedrock's recordId and Anthropic's
// custom_id (the ids the suite sends to providers: see ProviderRecordID).
// It is RecordIDPattern spelled as a loop: every record of a job is checked
// on the hot path of a file's validation, where the regexp took 7% of the
// CPU (BenchmarkFanoutCheck).
func ValidRecordID(id string) bool {
	if len(id) == 0 || len(id) > maxProviderRecordIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// maxProviderRecordIDLen is the {1,64} of RecordIDPattern.
const maxProviderRecordIDLen = 64

// RecordIDPattern is the pattern of provider-side record ids.
const RecordIDPattern = `^[A-Za-z0-9_-]{1,64}$`

// ProviderRecordID is the id the providers see for the job's record i (its
// position in the job): letters and digits only, because Bedrock documents
// recordId only as alphanumeric and Anthropic's custom_id allows fewer
// characters than callers use. Ingest maps it back to the caller's id.
func ProviderRecordID(i int) string {
	if i < 0 {
		return fmt.Sprintf("r%08d", i)
	}
	// "r%08d" without fmt: one a record on the hot path of validation.
	var b [24]byte
	n := len(b)
	for ; i > 0 || n > len(b)-8; i /= 10 {
		n--
		b[n] = byte('0' + i%10)
	}
	n--
	b[n] = 'r'
	return string(b[n:])
}

// ProviderRecordIndex is the inverse of ProviderRecordID.
func ProviderRecordIndex(id string) (int, bool) {
	if len(id) < 9 || id[0] != 'r' {
		return 0, false
	}
	n := 0
	for _, c := range id[1:] {
		if c < '0' || c > '9' || n > (1<<31)/10 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if ProviderRecordID(n) != id {
		return 0, false // leading zeros beyond the padding, or another spelling
	}
	return n, true
}

// CheckCallerRecordID says what is wrong with a caller's record id ("" when
// nothing): any text of 1..MaxRecordIDLen characters.
func CheckCallerRecordID(id string) string {
	switch n := utf8.RuneCountInString(id); {
	case id == "":
		return "must not be empty"
	case !utf8.ValidString(id):
		return "must be valid UTF-8"
	case n > MaxRecordIDLen:
		return fmt.Sprintf("at most %d characters (got %d)", MaxRecordIDLen, n)
	}
	return ""
}

// ExpiresAt is the TTL instant for a job created at now that lives ttlDays
// (a job stored without one keeps the default rather than expiring at once).
func ExpiresAt(now time.Time, ttlDays int) time.Time {
	if ttlDays <= 0 {
		ttlDays = DefaultTTLDays
	}
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
