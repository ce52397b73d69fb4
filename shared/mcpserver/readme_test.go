package mcpserver

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeTaskTools: the tools README.md says answer a task-capable client
// with a task are the ones that do.
func TestReadmeTaskTools(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	m := regexp.MustCompile(`get a task backed by the job from the [a-z]+ job-starting tools \(([^)]*)\)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("README.md: no list of the task tools")
	}
	var want, got []string
	for _, n := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(m[1], -1) {
		want = append(want, n[1])
	}
	for name := range taskTools {
		got = append(got, name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("task tools %v; README.md says %v", got, want)
	}
}
