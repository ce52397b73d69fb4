package job

import (
	"crypto/sha256"
	"strings"
	"time"
)

// Retry selections (retry_failed's "which").
const (
	RetryAll       = "all"       // every failed record
	RetryRetryable = "retryable" // only failures worth trying again (throttles, timeouts, 5xx)
	RetryIDs       = "ids"       // an explicit list of record ids
)

// retryableCodes are error codes of transient failures: throttling, timeouts
// and server-side errors of Bedrock (InvokeModel / batch output errorCode),
// Anthropic (error.type) and the HTTP layer. Sources, read 2026-11-30:
// https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html#API_runtime_InvokeModel_Errors
// https://docs.anthropic.com/en/api/errors
var retryableCodes = map[string]bool{
	"throttlingexception": true, "toomanyrequestsexception": true,
	"modeltimeoutexception": true, "modelnotreadyexception": true, "serviceunavailable": true,
	"serviceunavailableexception": true, "internalserverexception": true, "internalfailure": true,
	"modelerrorexception": true, "requesttimeout": true, "requesttimeoutexception": true,
	"overloaded_error": true, "api_error": true, "rate_limit_error": true, "timeout_error": true,
	"timeout": true, "throttled": true, "429": true, "408": true,
}

// RecordBudgetHeld is the suite's own error code of a record that was never
// sent to the provider because its part was held at the job's budget.
const RecordBudgetHeld = "BudgetHeld"

// RecordParseFailed and RecordSchemaViolation are the suite's own error
// codes of a record whose output is not JSON, or is JSON that breaks the
// job's output schema (its Output keeps the raw text). A model samples
// again on a retry, so both are retryable.
const (
	RecordParseFailed     = "parse_failed"
	RecordSchemaViolation = "schema_violation"
)

// Retryable reports whether a record failure is transient: throttling,
// timeouts and 5xx, records held at a budget (never run), and outputs that
// broke the output schema; a client error (400, ValidationException,
// invalid_request_error) fails the same way again.
func Retryable(code string) bool {
	c := strings.ToLower(strings.TrimSpace(strings.Trim(code, `"`)))
	if retryableCodes[c] || c == strings.ToLower(RecordBudgetHeld) || c == RecordParseFailed || c == RecordSchemaViolation {
		return true
	}
	return len(c) == 3 && c[0] == '5' && c[1] >= '0' && c[1] <= '9' && c[2] >= '0' && c[2] <= '9'
}

// RetryChildID is the id of the job retry_failed makes from parent for one
// selection: the same parent and selection always give the same id, so a
// second call finds the first child. It sorts like NewID by the parent's end
// (its first 10 characters are that time) and is a valid id.
func RetryChildID(parent *Job, selection string) string {
	var b strings.Builder
	b.Grow(IDLen)
	at := parent.CompletedAt
	if at.IsZero() {
		at = parent.CreatedAt
	}
	ms := uint64(at.Add(time.Millisecond).UnixMilli())
	var ts [10]byte
	for i := 9; i >= 0; i-- {
		ts[i] = idAlphabet[ms&31]
		ms >>= 5
	}
	b.Write(ts[:])
	h := sha256.Sum256([]byte(parent.ID + "\x00" + selection))
	for _, x := range h[:16] {
		b.WriteByte(idAlphabet[x&31])
	}
	return b.String()
}
