package readme

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../.."

// skipDirs hold no README of the project's own (tools, build output, state).
var skipDirs = map[string]bool{".git": true, ".tools": true, ".cdk": true, "node_modules": true, "bin": true, "cdk.out": true, ".mcpbatch": true}

// readmes are the repo's README.md files: path from the root → text.
func readmes(t *testing.T) map[string]string {
	t.Helper()
	out := files(t, root, func(name string) bool { return name == "README.md" })
	if len(out) < 8 {
		t.Fatalf("found %d READMEs", len(out))
	}
	return out
}

// files reads the files under dir whose base name match keeps, skipping
// skipDirs: path from the root → text.
func files(t *testing.T, dir string, match func(name string) bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skipDirs[d.Name()] {
			return filepath.SkipDir
		}
		if !d.IsDir() && match(d.Name()) {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	fenceRe = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
	spanRe  = regexp.MustCompile("`([^`\n]+)`")
)

// code is what a README shows as code: its fenced blocks and its code spans.
func code(text string) []string {
	var out []string
	for _, m := range fenceRe.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	for _, m := range spanRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(text, ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// goSource is every Go file of the module's own code: path → text.
func goSource(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, top := range []string{"functions", "infra", "shared"} {
		maps.Copy(out, files(t, filepath.Join(root, top), func(name string) bool { return strings.HasSuffix(name, ".go") }))
	}
	return out
}

// TestReadmeMakeTargets: every `make <target>` a README shows is a target
// of the Makefile, every VAR= it passes is a Makefile variable, and every
// phony target is shown by some README.
func TestReadmeMakeTargets(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	makefile := string(mk)
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllStringSubmatch(makefile, -1) {
		targets[m[1]] = true
	}
	shown := map[string]bool{}
	invocation := regexp.MustCompile(`\bmake ([a-z][a-z0-9-]*)((?: [A-Z_]+=(?:"[^"]*"|\S*))*)`)
	variable := regexp.MustCompile(`([A-Z_]+)=`)
	for path, text := range readmes(t) {
		for _, c := range code(text) {
			for _, m := range invocation.FindAllStringSubmatch(c, -1) {
				shown[m[1]] = true
				if !targets[m[1]] {
					t.Errorf("%s: `make %s`: no such target in the Makefile", path, m[1])
				}
				for _, v := range variable.FindAllStringSubmatch(m[2], -1) {
					if !strings.Contains(makefile, "$("+v[1]+")") {
						t.Errorf("%s: `make %s %s=`: the Makefile does not use %s", path, m[1], v[1], v[1])
					}
				}
			}
		}
	}
	phony := regexp.MustCompile(`(?m)^\.PHONY: (.*)$`).FindStringSubmatch(makefile)
	if phony == nil {
		t.Fatal("Makefile: no .PHONY line")
	}
	for _, tg := range strings.Fields(phony[1]) {
		if tg != "all" && !shown[tg] {
			t.Errorf("make %s: no README shows it", tg)
		}
	}
}

// TestReadmeEnvVars: every MCPBATCH_ variable a README names is read, or
// set for a client, by the module's code (its name is a string there).
func TestReadmeEnvVars(t *testing.T) {
	src := goSource(t)
	var all strings.Builder
	for _, s := range src {
		all.WriteString(s)
	}
	code := all.String()
	named := regexp.MustCompile(`\bMCPBATCH_[A-Z0-9_]+`)
	for path, text := range readmes(t) {
		for _, v := range named.FindAllString(text, -1) {
			if !strings.Contains(code, `"`+v+`"`) && !strings.Contains(code, v+`}`) {
				t.Errorf("%s: %s: no Go code names this variable", path, v)
			}
		}
	}
}

// TestReadmeDevFlags: every flag of bin/dev/local a README shows (a code
// span that starts with -name) is defined by infra/local.
func TestReadmeDevFlags(t *testing.T) {
	main, err := os.ReadFile(filepath.Join(root, "infra/local/main.go"))
	if err != nil {
		t.Fatal(err)
	}
	// Spans starting with these are flags of other commands (cdk -c, curl -H,
	// go test -v, bin/dev/local -h is the flag package's own).
	other := map[string]bool{"c": true, "h": true, "H": true, "v": true}
	flagRe := regexp.MustCompile(`^-([a-zA-Z][a-z-]*)`)
	seen := 0
	for path, text := range readmes(t) {
		for _, c := range code(text) {
			m := flagRe.FindStringSubmatch(c)
			if m == nil || other[m[1]] {
				continue
			}
			seen++
			if !regexp.MustCompile(`flag\.[A-Za-z]+\("` + regexp.QuoteMeta(m[1]) + `"`).Match(main) {
				t.Errorf("%s: `%s`: infra/local defines no flag -%s", path, c, m[1])
			}
		}
	}
	if seen < 5 {
		t.Errorf("found %d dev flags in the READMEs", seen)
	}
}

// TestReadmeContextKeys: every CDK context key a README passes (-c key=,
// "context key `key`") is one the stack reads (a Ctx constant of infra).
func TestReadmeContextKeys(t *testing.T) {
	src := goSource(t)
	keys := map[string]bool{}
	ctxConst := regexp.MustCompile(`\bCtx[A-Za-z]+\s*=\s*"([A-Za-z]+)"`)
	for path, s := range src {
		if strings.HasPrefix(path, "infra/") && !strings.HasSuffix(path, "_test.go") {
			for _, m := range ctxConst.FindAllStringSubmatch(s, -1) {
				keys[m[1]] = true
			}
		}
	}
	if len(keys) < 10 {
		t.Fatalf("found %d context keys in infra", len(keys))
	}
	passed := regexp.MustCompile("-c ([A-Za-z]+)=|context key `([A-Za-z]+)`|`([A-Za-z]+)` in `cdk\\.json`")
	for path, text := range readmes(t) {
		for _, m := range passed.FindAllStringSubmatch(text, -1) {
			key := m[1] + m[2] + m[3]
			if !keys[key] {
				t.Errorf("%s: context key %q: the stack reads no such key (it reads %v)", path, key, keys)
			}
		}
	}
}

// repoPath: a code span naming a file or folder of the repo.
var repoPath = regexp.MustCompile(`^(?:\.\./)*(?:\.\./|\./)?(?:shared|infra|functions|events|\.ci)/[A-Za-z0-9_./-]*$|^[A-Za-z0-9_-]+\.(?:go|json|cjs|js|html|sh|md|png)$`)

// braces: a span naming several folders of one parent.
var braces = regexp.MustCompile(`^((?:shared|infra|functions|events)/[A-Za-z0-9_/-]*)\{([a-z0-9_,-]+)\}$`)

// TestReadmePaths: every repo file or folder a README names in code, and
// every relative link or image, exists; a link's #anchor is a heading of
// the page it points at.
func TestReadmePaths(t *testing.T) {
	docs := readmes(t)
	exists := func(p string) bool { _, err := os.Stat(filepath.Join(root, p)); return err == nil }
	// Bare file names may live anywhere in the repo (`catalog.json`, `pipelines.json`).
	names := map[string]bool{}
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && skipDirs[d.Name()] {
			return filepath.SkipDir
		}
		if err == nil {
			names[d.Name()] = true
		}
		return nil
	})
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for path, text := range docs {
		dir := filepath.Dir(path)
		for _, c := range code(text) {
			// shared/provider/{bedrock,anthropic}: each of them.
			if m := braces.FindStringSubmatch(c); m != nil {
				for _, name := range strings.Split(m[2], ",") {
					if !exists(m[1] + name) {
						t.Errorf("%s: `%s`: no %s%s", path, c, m[1], name)
					}
				}
				continue
			}
			if !repoPath.MatchString(c) {
				continue
			}
			if !strings.Contains(c, "/") {
				if !names[c] {
					t.Errorf("%s: `%s`: no such file in the repo", path, c)
				}
				continue
			}
			if !exists(c) && !exists(filepath.Join(dir, c)) {
				t.Errorf("%s: `%s`: no such file or folder", path, c)
			}
		}
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			page := path
			if file != "" {
				page = filepath.Join(dir, file)
				if !exists(page) {
					t.Errorf("%s: link %s: no such file", path, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			body, err := os.ReadFile(filepath.Join(root, page))
			if err != nil {
				t.Errorf("%s: link %s: %v", path, target, err)
				continue
			}
			if !hasHeading(string(body), anchor) {
				t.Errorf("%s: link %s: %s has no heading #%s", path, target, page, anchor)
			}
		}
	}
}

// hasHeading: a Markdown heading of text whose GitHub anchor is anchor.
func hasHeading(text, anchor string) bool {
	for _, m := range regexp.MustCompile(`(?m)^#+ (.*)$`).FindAllStringSubmatch(text, -1) {
		slug := strings.ToLower(strings.TrimSpace(m[1]))
		slug = regexp.MustCompile(`[^a-z0-9 _-]`).ReplaceAllString(slug, "")
		if strings.ReplaceAll(slug, " ", "-") == anchor {
			return true
		}
	}
	return false
}

// TestReadmeNamedTests: every test a README names (TestX) exists, and every
// `go test ... -bench X ./pkg` or `go run ./pkg` it shows names a package
// that exists with such a benchmark.
func TestReadmeNamedTests(t *testing.T) {
	src := goSource(t)
	tests := map[string]bool{}
	for path, s := range src {
		if strings.HasSuffix(path, "_test.go") {
			for _, m := range regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`).FindAllStringSubmatch(s, -1) {
				tests[m[1]] = true
			}
		}
	}
	// Names that look like tests but are not ours.
	notOurs := map[string]bool{"TestNotification": true} // SageMaker's notification type
	named := regexp.MustCompile(`\bTest[A-Z][A-Za-z0-9_]*`)
	bench := regexp.MustCompile(`-bench '?\^?([A-Za-z0-9_]+)`)
	pkg := regexp.MustCompile(`\./(?:shared|infra|functions)[A-Za-z0-9_/-]*`)
	for path, text := range docs(t) {
		for _, n := range named.FindAllString(text, -1) {
			if !tests[n] && !notOurs[n] {
				t.Errorf("%s: %s: no such test", path, n)
			}
		}
		for _, c := range code(text) {
			if !strings.HasPrefix(c, "go ") {
				continue
			}
			for _, p := range pkg.FindAllString(c, -1) {
				dir := filepath.Join(root, strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/"))
				if st, err := os.Stat(dir); err != nil || !st.IsDir() {
					t.Errorf("%s: `%s`: no package %s", path, c, p)
					continue
				}
				if b := bench.FindStringSubmatch(c); b != nil && b[1] != "." {
					found := false
					for file, s := range src {
						if filepath.Join(root, filepath.Dir(file)) == dir && strings.HasSuffix(file, "_test.go") &&
							regexp.MustCompile(`(?m)^func Benchmark[A-Za-z0-9_]*`+regexp.QuoteMeta(b[1])).MatchString(s) {
							found = true
						}
					}
					if !found {
						t.Errorf("%s: `%s`: %s has no benchmark matching %s", path, c, p, b[1])
					}
				}
			}
		}
	}
}

func docs(t *testing.T) map[string]string { return readmes(t) }

// TestReadmeGoIdentifiers: every pkg.Name a README shows for one of the
// module's packages (notify.Verify, index.NewS3Vectors), and every
// Type.Member of the README's own package (Info.CompletedJobs), is declared
// there.
func TestReadmeGoIdentifiers(t *testing.T) {
	// Package name → its declarations: top-level names, and Type.Member
	// for struct fields and methods.
	decls := map[string]map[string]bool{}
	dirOf := map[string]string{}
	// external: names of other modules' packages the code imports (the AWS
	// SDK's s3vectors beside the simulator package of that name).
	external := map[string]bool{}
	fset := token.NewFileSet()
	_ = filepath.WalkDir(filepath.Join(root, "shared"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if skipDirs[d.Name()] || d.Name() == "testdata" {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(fset, p, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		for name, pk := range pkgs {
			set := map[string]bool{}
			for _, f := range pk.Files {
				for _, im := range f.Imports {
					if ip := strings.Trim(im.Path.Value, `"`); !strings.HasPrefix(ip, "github.com/mcpbatch/mcpbatch/") {
						external[path.Base(ip)] = true
					}
				}
				for _, d := range f.Decls {
					switch d := d.(type) {
					case *ast.FuncDecl:
						if d.Recv != nil && len(d.Recv.List) == 1 {
							set[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
						} else {
							set[d.Name.Name] = true
						}
					case *ast.GenDecl:
						for _, sp := range d.Specs {
							switch sp := sp.(type) {
							case *ast.TypeSpec:
								set[sp.Name.Name] = true
								if st, ok := sp.Type.(*ast.StructType); ok {
									for _, f := range st.Fields.List {
										for _, n := range f.Names {
											set[sp.Name.Name+"."+n.Name] = true
										}
									}
								}
							case *ast.ValueSpec:
								for _, n := range sp.Names {
									set[n.Name] = true
								}
							}
						}
					}
				}
			}
			rel, _ := filepath.Rel(root, p)
			if decls[name] == nil || rel == "shared/"+name {
				decls[name], dirOf[name] = set, rel
			}
		}
		return nil
	})
	ident := regexp.MustCompile(`\b([a-z][a-z0-9]*)\.([A-Z][A-Za-z0-9]*)\b`)
	member := regexp.MustCompile(`\b([A-Z][A-Za-z0-9]*)\.([A-Z][A-Za-z0-9]*)\b`)
	checked := 0
	for path, text := range readmes(t) {
		own := ""
		for name, dir := range dirOf {
			if filepath.Dir(path) == dir {
				own = name
			}
		}
		for _, c := range code(text) {
			for _, m := range ident.FindAllStringSubmatch(c, -1) {
				set := decls[m[1]]
				if set == nil {
					continue // another module's package (aws.String, s3vectors.NewFromConfig)
				}
				if !set[m[2]] && external[m[1]] {
					continue // the other module's package of that name (s3vectors.NewFromConfig)
				}
				checked++
				if !set[m[2]] {
					t.Errorf("%s: `%s`: %s declares no %s", path, m[0], dirOf[m[1]], m[2])
				}
			}
			if own == "" {
				continue
			}
			for _, m := range member.FindAllStringSubmatch(c, -1) {
				if !decls[own][m[1]] {
					continue // not a type of this package
				}
				checked++
				if !decls[own][m[1]+"."+m[2]] {
					t.Errorf("%s: `%s`: %s.%s has no field or method %s", path, m[0], own, m[1], m[2])
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d identifiers", checked)
	}
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	case *ast.IndexExpr:
		return recvName(e.X)
	}
	return ""
}

// TestReadmeInstalls: README.md names every package the tool scripts and the
// Makefile install (make test "says what it installs").
func TestReadmeInstalls(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	installs := []*regexp.Regexp{
		regexp.MustCompile(`"(@?[A-Za-z0-9./_-]+)@\$[A-Z0-9_]+"`),                                                    // npm and go install, pinned
		regexp.MustCompile(`(?:npm install|pip install)[^\n]* '?([a-z][a-z0-9-]*(?:\[[a-z]+\])?)(?:@[0-9]+)?'?\s*$`), // last argument
		regexp.MustCompile(`apt-get install [^\n]* ([a-z][a-z0-9-]+) >`),
	}
	n := 0
	for _, script := range []string{".ci/tools.sh", ".ci/pglite.sh", "Makefile"} {
		b, err := os.ReadFile(filepath.Join(root, script))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, re := range installs {
				for _, m := range re.FindAllStringSubmatch(line, -1) {
					pkg := m[1][strings.LastIndex(m[1], "/")+1:]
					n++
					if !strings.Contains(string(readme), pkg) {
						t.Errorf("%s installs %s; README.md does not say so", script, m[1])
					}
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("found %d installed packages", n)
	}
}

// TestReadmeDevDefaults: the defaults the READMEs state for make dev, make
// cost and make fuzz are the Makefile's and bin/dev/local's, and the Go
// version needed is go.mod's.
func TestReadmeDevDefaults(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(string(b)), " ")
	}
	readme, mk, main, gomod, infra := read("README.md"), read("Makefile"), read("infra/local/main.go"), read("go.mod"), read("infra/README.md")
	all := readme + read("shared/mcpserver/README.md")
	find := func(text, re string) string {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("nothing matches %s", re)
		}
		return m[1]
	}
	flagDefault := func(name string) string { return find(main, `flag\.[A-Za-z]+\("`+name+`", ([^,]+),`) }
	addr := find(readme, "make dev # the suite on http://([0-9.:]+)/mcp")
	dir := find(readme, `state in ([.a-z]+)/`)
	for _, c := range []struct{ what, got, want string }{
		{"Makefile ADDR", find(mk, `ADDR \?= (\S+)`), addr},
		{"-addr default", flagDefault("addr"), `"` + addr + `"`},
		{"Makefile DEV_DIR", find(mk, `DEV_DIR \?= (\S+)`), dir},
		{"-dir default", flagDefault("dir"), `"` + dir + `"`},
		{"-sim-fail-every default", flagDefault("sim-fail-every"), find(readme, "fails every ([0-9]+)th record by default \\(`-sim-fail-every`\\)")},
		{"-reconcile-every default", flagDefault("reconcile-every"), find(all, "runs the reconciler every ([0-9]+) s \\(`-reconcile-every`\\)") + " * time.Second"},
		{"-auth default", flagDefault("auth"), `"` + find(readme, "make dev & # ([a-z]+) mode, as deployed") + `"`},
		{"go.mod go version", find(gomod, `^module \S+ go ([0-9]+\.[0-9]+)`), find(readme, `Needs Go ([0-9.]+)`)},
		{"Makefile COST_RECORDS", find(mk, `COST_RECORDS \?= ([0-9]+)`), strings.ReplaceAll(find(infra, "with `COST_RECORDS` \\(([0-9,]+)\\) records"), ",", "")},
		{"Makefile FUZZ_TIME", find(mk, `FUZZ_TIME \?= ([0-9]+)s`), find(infra, "every fuzz target for `FUZZ_TIME`, ([0-9]+) s each")},
	} {
		if strings.ReplaceAll(c.got, "*time.Second", " * time.Second") != c.want {
			t.Errorf("%s is %s; the READMEs say %s", c.what, c.got, c.want)
		}
	}
}
