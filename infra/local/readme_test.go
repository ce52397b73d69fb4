package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestReadmeConformanceScenarios: the conformance scenarios README.md says
// pass are the ones TestConformance runs.
func TestReadmeConformanceScenarios(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("bearer key\\): (.*?) pass\\.").FindStringSubmatch(strings.Join(strings.Fields(string(b)), " "))
	if m == nil {
		t.Fatal("README.md lists no passing conformance scenarios")
	}
	var listed []string
	for _, s := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(m[1], -1) {
		listed = append(listed, s[1])
	}
	if !slices.Equal(listed, conformanceScenarios) {
		t.Errorf("README.md lists %v; TestConformance runs %v", listed, conformanceScenarios)
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
