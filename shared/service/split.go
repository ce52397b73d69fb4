package service

import (
	"fmt"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

// Split divides records into provider jobs (parts) under a provider's limits.
// sizes[i] is the encoded length of record i (without its line separator,
// which counts one byte). Parts keep record order and are balanced by count,
// as few as the limits allow; a part never holds more than MaxRecordsPerPart
// records or MaxBytesPerPart bytes (envelope and separators included), and no
// part is left under MinRecords when moving records between neighbours can
// avoid it. A record that alone does not fit a part is a *job.FieldError.
func Split(sizes []int, lim BatchLimits) ([]int, error) {
	n := len(sizes)
	if n == 0 {
		return []int{0}, nil
	}
	maxN := lim.MaxRecordsPerPart
	if maxN <= 0 {
		maxN = n
	}
	maxB := lim.MaxBytesPerPart
	var total int64
	for i, sz := range sizes {
		b := int64(sz) + 1
		if maxB > 0 && b+lim.EnvelopeBytes > maxB {
			return nil, job.Fieldf(fmt.Sprintf("records[%d]", i), "encodes to %d bytes, over the %d bytes one provider job may hold", sz, maxB)
		}
		total += b
	}
	k := (n + maxN - 1) / maxN
	if maxB > 0 {
		k = max(k, int((total+maxB-lim.EnvelopeBytes-1)/(maxB-lim.EnvelopeBytes)))
	}
	for ; k < n; k++ { // k == n always fits: one record per part
		if parts, ok := fill(sizes, k, maxN, maxB, lim.EnvelopeBytes); ok {
			return evenOut(parts, sizes, lim.MinRecords, maxN, maxB, lim.EnvelopeBytes), nil
		}
	}
	out := make([]int, n) // one record per part always fits: each was checked above
	for i := range out {
		out[i] = 1
	}
	return out, nil
}

// fill tries k parts: each takes its balanced share of what is left, cut short
// where the bytes would overflow. It fails when records remain after part k.
func fill(sizes []int, k, maxN int, maxB, env int64) ([]int, bool) {
	parts := make([]int, 0, k)
	start := 0
	for i := 0; i < k && start < len(sizes); i++ {
		left := len(sizes) - start
		target := min((left+(k-i)-1)/(k-i), maxN)
		bytes, c := env, 0
		for c < target && (maxB <= 0 || bytes+int64(sizes[start+c])+1 <= maxB) {
			bytes += int64(sizes[start+c]) + 1
			c++
		}
		parts = append(parts, c)
		start += c
	}
	return parts, start == len(sizes)
}

// evenOut moves records across part boundaries so a part under minRecords
// borrows from a neighbour that can spare them, within the limits.
func evenOut(parts, sizes []int, minRecords, maxN int, maxB, env int64) []int {
	if minRecords <= 1 || len(parts) < 2 {
		return parts
	}
	bytesOf := func(from, count int) int64 {
		b := env
		for _, sz := range sizes[from : from+count] {
			b += int64(sz) + 1
		}
		return b
	}
	fits := func(from, count int) bool {
		return count <= maxN && (maxB <= 0 || bytesOf(from, count) <= maxB)
	}
	for changed := true; changed; {
		changed = false
		start := 0
		for i := 0; i+1 < len(parts); i++ {
			a, b := parts[i], parts[i+1]
			switch {
			case b < minRecords && a > minRecords && fits(start+a-1, b+1):
				// The right part takes the left part's last record.
				parts[i], parts[i+1] = a-1, b+1
				changed = true
			case a < minRecords && b > minRecords && fits(start, a+1):
				// The left part takes the right part's first record.
				parts[i], parts[i+1] = a+1, b-1
				changed = true
			}
			start += parts[i]
		}
	}
	return parts
}
