package job

import "slices"

// AddWarnings appends warnings to the job's, each once, in order.
func (j *Job) AddWarnings(ws ...string) {
	for _, w := range ws {
		if w != "" && !slices.Contains(j.Warnings, w) {
			j.Warnings = append(j.Warnings, w)
		}
	}
}
