package bedrockrt

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeMediaBudget: the byte budget shared/content/README.md states for
// on-demand media in flight is DefaultMediaBytesInFlight, the bound the
// runtime applies when none is configured.
func TestReadmeMediaBudget(t *testing.T) {
	b, err := os.ReadFile("../../content/README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("\\(`bedrockrt\\.DefaultMediaBytesInFlight`, ([0-9]+) MiB;").FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("shared/content/README.md states no media byte budget")
	}
	if n, _ := strconv.Atoi(m[1]); n<<20 != DefaultMediaBytesInFlight {
		t.Errorf("README says %s MiB, DefaultMediaBytesInFlight is %d bytes", m[1], DefaultMediaBytesInFlight)
	}
}
