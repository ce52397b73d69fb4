// Package browsertest finds the headless browser the page tests drive.
package browsertest

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium finds Debian's chromium (installed by .ci/tools.sh). Without it the
// test skips, except under make test (MCPBATCH_E2E=1), where it must be there.
func Chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("MCPBATCH_E2E") == "1" {
		tb.Fatal("chromium not found on PATH; run make tools (apt-get install chromium)")
	}
	tb.Skip("chromium not installed; make test installs it")
	return ""
}
