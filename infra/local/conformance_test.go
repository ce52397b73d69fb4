package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// conformanceRevision is the MCP revision whose required server scenarios
// TestConformance runs: `conformance server --requirements 2026-07-28` runs
// exactly the list the suite froze for it (requirements/2026-07-28.yaml in
// the package), at that revision's stateless wire.
const conformanceRevision = "2026-07-28"

// expectedFailuresFile lists the checks that need the suite's own reference
// fixture (test_simple_text, test://static-text, ...), one reason each.
const expectedFailuresFile = "testdata/conformance-expected-failures.yaml"

// baselineEntry matches one entry of expectedFailuresFile: scenario, check, reason.
var baselineEntry = regexp.MustCompile(`^\s*- ([a-z0-9-]+):([a-z0-9-]+) # (.+)$`)

// fixtureName is the fixture a reason names: a test_ tool or prompt, or a test:// resource.
var fixtureName = regexp.MustCompile(`test(?:_[a-z0-9_]+|://[a-z0-9/{}_-]+)`)

// resultDir is a results folder of one scenario: server-<scenario>-<ISO time with dashes>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

type baselined struct{ scenario, check, reason, fixture string }

// readBaseline reads expectedFailuresFile; every entry must name the fixture it needs.
func readBaseline(t *testing.T) []baselined {
	t.Helper()
	f, err := os.Open(expectedFailuresFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []baselined
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(strings.TrimSpace(line), "- ") {
			continue
		}
		m := baselineEntry.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: %q is not `- <scenario>:<check-id> # <reason>`", expectedFailuresFile, line)
		}
		fx := fixtureName.FindString(m[3])
		if fx == "" {
			t.Fatalf("%s: %s:%s: the reason %q names no fixture tool, prompt or resource of the suite", expectedFailuresFile, m[1], m[2], m[3])
		}
		out = append(out, baselined{m[1], m[2], m[3], fx})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// requiredServerScenarios reads the server list of the suite's requirements file for rev.
func requiredServerScenarios(t *testing.T, script, rev string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(script), "..", "requirements", rev+".yaml"))
	if err != nil {
		t.Fatalf("the conformance package has no requirements for %s: %v", rev, err)
	}
	var out []string
	in := false
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "server:":
			in = true
		case in && strings.HasPrefix(l, "  - "):
			out = append(out, strings.TrimSpace(strings.TrimPrefix(l, "  - ")))
		case in && l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "#"):
			return out
		}
	}
	return out
}

func conformance(t *testing.T) (node, script string) {
	t.Helper()
	node, _ = inspector(t)
	tools := os.Getenv("MCPBATCH_TOOLS")
	if tools == "" {
		tools = filepath.Join("..", "..", ".tools")
	}
	script = filepath.Join(tools, "conformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		if os.Getenv("MCPBATCH_E2E") == "1" {
			t.Fatalf("%s missing: run bash .ci/tools.sh", script)
		}
		t.Skipf("%s missing (bash .ci/tools.sh installs it)", script)
	}
	return node, script
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestConformance runs every server scenario MCP 2026-07-28 requires against
// make dev. The suite cannot send a bearer key, so it runs with -auth none;
// auth is covered by the Inspector and RIE layers. The run fails on any
// failing check not in expectedFailuresFile and on any entry there that
// passes; this test adds that every required scenario ran and that each
// baselined check failed while the fixture it names is the suite's.
func TestConformance(t *testing.T) {
	node, script := conformance(t)
	base := readBaseline(t)
	suite, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range base {
		if !strings.Contains(string(suite), e.fixture) {
			t.Errorf("%s:%s: %s is not a fixture of this conformance suite", e.scenario, e.check, e.fixture)
		}
	}
	required := requiredServerScenarios(t, script, conformanceRevision)
	if len(required) == 0 {
		t.Fatalf("no required server scenarios for %s", conformanceRevision)
	}

	d := startDev(t, "-auth", "none")
	results := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, script, "server", "--url", d.url,
		"--requirements", conformanceRevision, "--expected-failures", expectedFailuresFile, "-o", results).CombinedOutput()
	if err != nil {
		t.Fatalf("conformance --requirements %s: %v\n%s", conformanceRevision, err, out)
	}

	// Results land in <results>/server-<scenario>-<timestamp>/checks.json.
	checks := map[string][]check{}
	dirs, _ := filepath.Glob(filepath.Join(results, "server-*", "checks.json"))
	for _, p := range dirs {
		m := resultDir.FindStringSubmatch(filepath.Base(filepath.Dir(p)))
		if m == nil {
			t.Fatalf("unexpected results folder %s", p)
		}
		name := m[1]
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var cs []check
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		checks[name] = cs
	}
	for _, sc := range required {
		cs, ok := checks[sc]
		if !ok || len(cs) == 0 {
			t.Errorf("required scenario %s ran no checks", sc)
			continue
		}
		failed := 0
		for _, c := range cs {
			if c.Status == "FAILURE" || c.Status == "WARNING" {
				failed++
			}
		}
		t.Logf("%s: %d checks, %d failing as baselined", sc, len(cs), failed)
	}
	for _, e := range base {
		found := false
		for _, c := range checks[e.scenario] {
			if c.ID == e.check {
				found = true
				if c.Status != "FAILURE" && c.Status != "WARNING" {
					t.Errorf("%s:%s is baselined but %s", e.scenario, e.check, c.Status)
				}
			}
		}
		if !found {
			t.Errorf("%s:%s is baselined but the run has no such check", e.scenario, e.check)
		}
	}
}
