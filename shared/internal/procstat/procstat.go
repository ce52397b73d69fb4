// Package procstat reads the process's own memory figures for the memory
// probes and benchmarks (Linux /proc).
package procstat

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSS is VmHWM, the resident set's high-water mark, in bytes.
func PeakRSS() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("peak rss: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("peak rss: %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("peak rss: no VmHWM in /proc/self/status")
}

// PeakRSSMB is PeakRSS in MiB, 0 when it cannot be read.
func PeakRSSMB() float64 {
	n, err := PeakRSS()
	if err != nil {
		return 0
	}
	return float64(n) / (1 << 20)
}

// ResetPeakRSS sets VmHWM back to the current resident set (Linux 4.0 and
// later: "5" to /proc/self/clear_refs), so that a phase of a run can be
// measured on its own.
func ResetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak rss: %w", err)
	}
	return nil
}
