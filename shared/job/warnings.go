package job

import "slices"

// AddWarning appends w to the job's warnings unless it is already there, so
// a retried step never shows the same warning twice.
func (j *Job) AddWarning(w ...string) {
	for _, x := range w {
		if x != "" && !slices.Contains(j.Warnings, x) {
			j.Warnings = append(j.Warnings, x)
		}
	}
}
