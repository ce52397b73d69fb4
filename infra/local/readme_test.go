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
