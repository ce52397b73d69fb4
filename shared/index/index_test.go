package index_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/index"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestPhysicalName(t *testing.T) {
	// S3 Vectors index naming: 3–63 of a-z 0-9 - ., alphanumeric at both ends.
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	refs := []index.Ref{
		{Owner: "alice", Name: "docs"},
		{Owner: "bob", Name: "docs"},
		{Owner: "alice", Name: "Docs"},
		{Owner: "alice\x00docs", Name: ""},
		{Owner: "arn:aws:iam::123456789012:user/Long.Name_With-Everything", Name: "a.b_c-D"},
	}
	seen := map[string]index.Ref{}
	for _, r := range refs {
		p := index.PhysicalName(r)
		if !valid.MatchString(p) {
			t.Fatalf("%+v -> %q is not a valid S3 Vectors index name", r, p)
		}
		if p != index.PhysicalName(r) {
			t.Fatalf("not deterministic for %+v", r)
		}
		if prev, dup := seen[p]; dup {
			t.Fatalf("%+v and %+v share %q", prev, r, p)
		}
		seen[p] = r
	}
}

func TestBatches(t *testing.T) {
	mk := func(n, dim int) []index.Vector {
		v := make([]index.Vector, n)
		for i := range v {
			d := make([]float32, dim)
			for j := range d {
				d[j] = -1.2345678e-38 // the longest float32 text the SDK writes
			}
			v[i] = index.Vector{Key: "k", Data: d}
		}
		return v
	}
	for _, c := range []struct {
		name  string
		vecs  []index.Vector
		sizes []int
	}{
		{"empty", nil, nil},
		{"one", mk(1, 4), []int{1}},
		{"500", mk(500, 4), []int{500}},
		{"1201", mk(1201, 4), []int{500, 500, 201}},
		// 500 × 4096 floats at ~16 bytes each is ~32 MB: split under 20 MiB
		{"4096-dim", mk(500, 4096), []int{318, 182}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sizes []int
			for _, b := range index.Batches(c.vecs) {
				sizes = append(sizes, len(b))
				raw, _ := json.Marshal(b)
				if len(raw) > index.MaxRequestBytes {
					t.Fatalf("batch of %d is %d bytes of JSON", len(b), len(raw))
				}
			}
			if len(sizes) != len(c.sizes) {
				t.Fatalf("sizes %v, want %v", sizes, c.sizes)
			}
			for i := range sizes {
				if sizes[i] != c.sizes[i] {
					t.Fatalf("sizes %v, want %v", sizes, c.sizes)
				}
			}
		})
	}
}

// TestS3Document checks the filter language's mapping onto the S3 Vectors
// filter document against testdata/filter_document.golden.json.
func TestS3Document(t *testing.T) {
	info := index.Info{Name: "i", FilterableKeys: []string{"lang", "year", "draft"}}
	filters := []index.Filter{
		{"lang": "en"},
		{"lang": map[string]any{"$eq": "fr"}},
		{"year": map[string]any{"$in": []any{2024, 2025}}},
		{"lang": "en", "draft": false, "year": 2025},
	}
	var docs []any
	for _, f := range filters {
		conds, err := index.ParseFilter(info, f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, index.S3Document(conds))
	}
	got, _ := json.MarshalIndent(docs, "", "  ")
	path := filepath.Join("testdata", "filter_document.golden.json")
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(append(got, '\n')) != string(want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
