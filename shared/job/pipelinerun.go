package job

import (
	"crypto/sha256"
	"time"
)

// PipelineRun ties a job to the report pipeline run that submitted it.
type PipelineRun struct {
	Name string `json:"name"`
	Date string `json:"date"` // YYYY-MM-DD in the pipeline's time zone
	// SkippedURI lists the documents the run could not use (unreadable, oversized, template errors).
	SkippedURI string `json:"skippedUri,omitempty"`
	Skipped    int    `json:"skipped"`
	Documents  int    `json:"documents"`
	// ReportURI is the report folder, set once the report is written.
	ReportURI string    `json:"reportUri,omitempty"`
	Notified  time.Time `json:"notified,omitzero"`
}

// RunID is the job id of a pipeline run: the date's instant (so ids still sort by
// time) followed by a hash of the run key, so a rerun of the same pipeline and date
// names the same job and the store's conditional create refuses a second one.
func RunID(day time.Time, key string) string {
	ms := uint64(day.UnixMilli())
	var b [IDLen]byte
	for i := 9; i >= 0; i-- {
		b[i] = idAlphabet[ms&31]
		ms >>= 5
	}
	h := sha256.Sum256([]byte(key))
	for i := 0; i < 16; i++ {
		b[10+i] = idAlphabet[h[i]&31]
	}
	return string(b[:])
}
