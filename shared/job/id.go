package job

import (
	"crypto/rand"
	"strings"
	"time"
)

// Crockford's base32 in lower case: sortable and valid in a Bedrock jobName,
// a SageMaker InferenceId and a clientRequestToken.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// IDLen is the length of a job id: 10 characters of milliseconds, 16 of randomness.
const IDLen = 26

// NewID returns a new time-sortable job id.
func NewID(now time.Time) string {
	var b strings.Builder
	b.Grow(IDLen)
	ms := uint64(now.UnixMilli())
	var ts [10]byte
	for i := 9; i >= 0; i-- {
		ts[i] = idAlphabet[ms&31]
		ms >>= 5
	}
	b.Write(ts[:])
	var rnd [16]byte
	_, _ = rand.Read(rnd[:])
	for _, r := range rnd {
		b.WriteByte(idAlphabet[r&31])
	}
	return b.String()
}

// ValidID reports whether s looks like a job id, so junk never reaches a store query.
func ValidID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(idAlphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}
