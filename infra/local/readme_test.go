package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeConformance: README.md names the revision and the
// expected-failures file TestConformance runs with.
func TestReadmeConformance(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{"`--requirements " + conformanceRevision + "`", "`" + expectedFailuresFile + "`"} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md does not say %s", want)
		}
	}
}

// TestReadmeInspectCommand: the inspect() helper of the top README runs the
// Inspector CLI as the end-to-end tests do (same node, same script, same
// flags), so the walk-through is the tested path.
func TestReadmeInspectCommand(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`inspect\(\) \{ (\S+) (\S+) \\\s+(--cli \S+ --transport http --header "Authorization: Bearer \$KEY") "\$@"; \}`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("README.md: no inspect() helper of the expected form")
	}
	node, script := inspectorPaths(".tools")
	if m[1] != node || m[2] != script {
		t.Errorf("README.md runs %s %s; the end-to-end tests run %s %s", m[1], m[2], node, script)
	}
	if !strings.Contains(m[3], "--cli http://127.0.0.1:8787/mcp") {
		t.Errorf("README.md's inspect() points at %q, not make dev's default URL", m[3])
	}
}
