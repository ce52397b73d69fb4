package app

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoUpwardImport holds the layers of shared/ the composition root stacks:
// the service declares its ports and imports no adapter; adapters (provider,
// remote) implement ports declared at or below them and import no wiring;
// only the wiring (app) imports the wiring. Test files may reach up (they
// assemble fixtures); the packages themselves may not.
func TestNoUpwardImport(t *testing.T) {
	const module = "github.com/mcpbatch/mcpbatch/"
	rules := []struct {
		from string   // a package path under the module, as a prefix
		not  []string // prefixes it must not import
	}{
		{"shared/service", []string{"shared/provider", "shared/remote", "shared/app", "shared/handler", "shared/mcpserver"}},
		{"shared/provider", []string{"shared/remote", "shared/app"}},
		{"shared/remote", []string{"shared/app"}},
	}
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(filepath.Join(root, "shared"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(p, module)
			if !ok {
				continue
			}
			for _, r := range rules {
				if !under(pkg, r.from) {
					continue
				}
				for _, n := range r.not {
					if under(dep, n) {
						t.Errorf("%s imports %s: %s sits below %s (move the port down, or the adapter up)", path, dep, r.from, n)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d files under shared/: the walk did not find the tree", checked)
	}
}

// under reports whether package path p is prefix or inside it.
func under(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
