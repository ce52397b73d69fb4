// Package indextest is the contract every index.Index adapter passes: creation
// and reopening, refusal of mismatches, put/get/delete, query order and scores
// for both metrics, k bounds, filters, owner isolation, limit errors, counts,
// commit markers and batching over the 500-vector write limit.
package indextest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/index"
)

// Run runs the contract against ix. Each case uses its own owner, so cases do
// not see each other's indexes even though they share one backend.
func Run(t *testing.T, ix index.Index) {
	cases := []struct {
		name string
		f    func(*testing.T, context.Context, index.Index, string)
	}{
		{"CreateReopenMismatch", createReopenMismatch},
		{"BadSpec", badSpec},
		{"PutGetDelete", putGetDelete},
		{"QueryCosine", func(t *testing.T, ctx context.Context, ix index.Index, o string) {
			queryOrder(t, ctx, ix, o, index.Cosine)
		}},
		{"QueryEuclidean", func(t *testing.T, ctx context.Context, ix index.Index, o string) {
			queryOrder(t, ctx, ix, o, index.Euclidean)
		}},
		{"KBounds", kBounds},
		{"Filters", filters},
		{"OwnerIsolation", ownerIsolation},
		{"Limits", limits},
		{"DescribeAndList", describeAndList},
		{"CommitMarkers", commitMarkers},
		{"BatchingOver500", batching},
		{"DeleteIndex", deleteIndex},
		{"OwnerQuota", ownerQuota},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.f(t, context.Background(), ix, "owner-"+c.name)
		})
	}
}

// get(f())(t) fails the test when f returns an error, else returns f's value.
func get[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustErr(t *testing.T, err error, target error, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one mentioning %q", words)
	}
	if target != nil && !errors.Is(err, target) {
		t.Fatalf("error %v is not %v", err, target)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
}

func spec(dim int, m index.Metric) index.Spec {
	return index.Spec{Dimension: dim, Metric: m, Model: "amazon.titan-embed-text-v2:0", NonFilterable: []string{"text"}}
}

func createReopenMismatch(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	ref := index.Ref{Owner: owner, Name: "docs"}
	raw := spec(4, index.Cosine)
	raw.Normalize = new(bool) // how the vectors were embedded, kept for the query
	info := get(ix.Open(ctx, ref, raw))(t)
	if info.Name != "docs" || info.Dimension != 4 || info.Metric != index.Cosine || info.Model != "amazon.titan-embed-text-v2:0" || info.Vectors != 0 {
		t.Fatalf("created %+v", info)
	}
	for _, i := range []index.Info{info, get(ix.Describe(ctx, ref))(t)} {
		if i.Normalize == nil || *i.Normalize {
			t.Fatalf("normalize recorded as %v, want false", i.Normalize)
		}
	}
	again := get(ix.Open(ctx, ref, spec(4, index.Cosine)))(t)
	if !again.CreatedAt.Equal(info.CreatedAt) {
		t.Fatalf("reopen made a new index: %v then %v", info.CreatedAt, again.CreatedAt)
	}
	for _, c := range []struct {
		s          index.Spec
		field, has string
	}{
		{spec(8, index.Cosine), "dimension", "4"},
		{spec(4, index.Euclidean), "metric", "cosine"},
		{index.Spec{Dimension: 4, Metric: index.Cosine, Model: "cohere.embed-english-v3"}, "model", "amazon.titan-embed-text-v2:0"},
	} {
		_, err := ix.Open(ctx, ref, c.s)
		var mm *index.MismatchError
		if !errors.As(err, &mm) || mm.Field != c.field || mm.Have != c.has {
			t.Fatalf("open with %+v: %v; want mismatch of %s (index has %s)", c.s, err, c.field, c.has)
		}
		mustErr(t, err, nil, c.field, c.has, "docs")
	}
}

func badSpec(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	for _, c := range []struct {
		ref  index.Ref
		s    index.Spec
		word string
	}{
		{index.Ref{Owner: owner, Name: "a"}, spec(0, index.Cosine), "dimension"},
		{index.Ref{Owner: owner, Name: "a"}, spec(4097, index.Cosine), "4096"},
		{index.Ref{Owner: owner, Name: "a"}, spec(4, "dot"), "metric"},
		{index.Ref{Owner: owner, Name: "a"}, index.Spec{Dimension: 4, Metric: index.Cosine}, "model"},
		{index.Ref{Owner: owner, Name: "bad name!"}, spec(4, index.Cosine), "index"},
		{index.Ref{Owner: owner, Name: strings.Repeat("n", 64)}, spec(4, index.Cosine), "63"},
		{index.Ref{Owner: "", Name: "a"}, spec(4, index.Cosine), "owner"},
	} {
		_, err := ix.Open(ctx, c.ref, c.s)
		mustErr(t, err, index.ErrInvalid, c.word)
	}
}

func putGetDelete(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	ref := index.Ref{Owner: owner, Name: "pgd"}
	get(ix.Open(ctx, ref, spec(3, index.Cosine)))(t)
	vecs := []index.Vector{
		{Key: "a", Data: []float32{1, 0.5, -0.25}, Metadata: map[string]any{"lang": "en", "n": 1.0, "text": "alpha"}},
		{Key: "b", Data: []float32{0, 1, 0}, Metadata: map[string]any{"tags": []any{"x", "y"}}},
		{Key: "c", Data: []float32{0.125, 0, 1}},
	}
	noErr(t, ix.Put(ctx, ref, vecs))
	got := get(ix.Get(ctx, ref, []string{"c", "a", "zz"}))(t)
	if len(got) != 2 {
		t.Fatalf("got %d vectors, want a and c: %+v", len(got), got)
	}
	byKey := map[string]index.Vector{}
	for _, v := range got {
		byKey[v.Key] = v
	}
	a := byKey["a"]
	if fmt.Sprint(a.Data) != "[1 0.5 -0.25]" || a.Metadata["lang"] != "en" || a.Metadata["n"] != 1.0 || a.Metadata["text"] != "alpha" {
		t.Fatalf("a = %+v", a)
	}
	if c := byKey["c"]; fmt.Sprint(c.Data) != "[0.125 0 1]" || len(c.Metadata) != 0 {
		t.Fatalf("c = %+v", c)
	}
	// replace by key
	noErr(t, ix.Put(ctx, ref, []index.Vector{{Key: "a", Data: []float32{0, 0, 1}, Metadata: map[string]any{"lang": "fr"}}}))
	got = get(ix.Get(ctx, ref, []string{"a"}))(t)
	if len(got) != 1 || fmt.Sprint(got[0].Data) != "[0 0 1]" || got[0].Metadata["lang"] != "fr" || got[0].Metadata["text"] != nil {
		t.Fatalf("after replace: %+v", got)
	}
	if n := get(ix.Describe(ctx, ref))(t).Vectors; n != 3 {
		t.Fatalf("count after replace = %d, want 3", n)
	}
	noErr(t, ix.Delete(ctx, ref, []string{"b", "nope"}))
	if got := get(ix.Get(ctx, ref, []string{"b"}))(t); len(got) != 0 {
		t.Fatalf("b still there: %+v", got)
	}
	if n := get(ix.Describe(ctx, ref))(t).Vectors; n != 2 {
		t.Fatalf("count after delete = %d, want 2", n)
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// distance is the reference the adapters are checked against.
func distance(m index.Metric, a, b []float32) float64 {
	var dot, sq float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		d := float64(a[i]) - float64(b[i])
		sq += d * d
	}
	if m == index.Cosine {
		return 1 - dot/(norm(a)*norm(b))
	}
	return math.Sqrt(sq)
}

func queryOrder(t *testing.T, ctx context.Context, ix index.Index, owner string, m index.Metric) {
	ref := index.Ref{Owner: owner, Name: "q-" + string(m)}
	get(ix.Open(ctx, ref, spec(3, m)))(t)
	data := map[string][]float32{
		"east":  {1, 0, 0},
		"ne":    {1, 1, 0},
		"north": {0, 2, 0},
		"west":  {-1, 0, 0},
		"up":    {0.2, 0, 3},
	}
	var vecs []index.Vector
	for k, v := range data {
		vecs = append(vecs, index.Vector{Key: k, Data: v, Metadata: map[string]any{"name": k}})
	}
	noErr(t, ix.Put(ctx, ref, vecs))
	q := []float32{0.9, 0.2, 0.1}
	want := map[index.Metric][]string{
		index.Cosine:    {"east", "ne", "north", "up", "west"},
		index.Euclidean: {"east", "ne", "west", "north", "up"},
	}[m]
	res := get(ix.Query(ctx, ref, index.Query{Vector: q, K: 5}))(t)
	if len(res) != 5 {
		t.Fatalf("%d results: %+v", len(res), res)
	}
	for i, r := range res {
		if r.Key != want[i] {
			t.Fatalf("rank %d = %s, want order %v; got %+v", i, r.Key, want, res)
		}
		d := distance(m, data[r.Key], q)
		if math.Abs(r.Distance-d) > 1e-4 {
			t.Fatalf("%s: distance %v, want %v", r.Key, r.Distance, d)
		}
		if s := index.ScoreOf(m, d); math.Abs(r.Score-s) > 1e-4 {
			t.Fatalf("%s: score %v, want %v", r.Key, r.Score, s)
		}
		if r.Metadata["name"] != r.Key {
			t.Fatalf("%s: metadata %v", r.Key, r.Metadata)
		}
	}
	top := get(ix.Query(ctx, ref, index.Query{Vector: q, K: 2}))(t)
	if len(top) != 2 || top[0].Key != want[0] || top[1].Key != want[1] {
		t.Fatalf("k=2: %+v", top)
	}
	_, err := ix.Query(ctx, ref, index.Query{Vector: []float32{1, 0}, K: 1})
	mustErr(t, err, index.ErrInvalid, "dimension 2", "3")
}

func kBounds(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	ref := index.Ref{Owner: owner, Name: "k"}
	get(ix.Open(ctx, ref, spec(2, index.Euclidean)))(t)
	var vecs []index.Vector
	for i := 0; i < 120; i++ {
		vecs = append(vecs, index.Vector{Key: fmt.Sprintf("v%03d", i), Data: []float32{float32(i), 1}})
	}
	noErr(t, ix.Put(ctx, ref, vecs))
	for _, k := range []int{0, -1, 101} {
		_, err := ix.Query(ctx, ref, index.Query{Vector: []float32{0, 1}, K: k})
		mustErr(t, err, index.ErrInvalid, "k", "100")
	}
	res := get(ix.Query(ctx, ref, index.Query{Vector: []float32{0, 1}, K: 100}))(t)
	if len(res) != 100 || res[0].Key != "v000" || res[99].Key != "v099" {
		t.Fatalf("k=100: %d results, first %v", len(res), res[:1])
	}
	small := index.Ref{Owner: owner, Name: "k-small"}
	get(ix.Open(ctx, small, spec(2, index.Euclidean)))(t)
	noErr(t, ix.Put(ctx, small, vecs[:3]))
	if res := get(ix.Query(ctx, small, index.Query{Vector: []float32{0, 1}, K: 10}))(t); len(res) != 3 {
		t.Fatalf("k above count: %d results", len(res))
	}
}

func filters(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	ref := index.Ref{Owner: owner, Name: "f"}
	get(ix.Open(ctx, ref, spec(2, index.Cosine)))(t)
	noErr(t, ix.Put(ctx, ref, []index.Vector{
		{Key: "en1", Data: []float32{1, 0}, Metadata: map[string]any{"lang": "en", "year": 2024.0, "tags": []any{"news", "sport"}, "text": "t"}},
		{Key: "en2", Data: []float32{1, 0.1}, Metadata: map[string]any{"lang": "en", "year": 2025.0, "tags": []any{"tech"}}},
		{Key: "fr1", Data: []float32{1, 0.2}, Metadata: map[string]any{"lang": "fr", "year": 2024.0, "draft": true}},
		{Key: "de1", Data: []float32{1, 0.3}, Metadata: map[string]any{"lang": "de"}},
	}))
	q := []float32{1, 0}
	for _, c := range []struct {
		f    index.Filter
		want string
	}{
		{index.Filter{"lang": "en"}, "en1,en2"},
		{index.Filter{"lang": map[string]any{"$eq": "fr"}}, "fr1"},
		{index.Filter{"lang": map[string]any{"$in": []any{"fr", "de"}}}, "fr1,de1"},
		{index.Filter{"year": 2024.0}, "en1,fr1"},
		{index.Filter{"year": 2024}, "en1,fr1"},
		{index.Filter{"lang": "en", "year": 2025.0}, "en2"},
		{index.Filter{"tags": "sport"}, "en1"},
		{index.Filter{"tags": map[string]any{"$in": []any{"tech", "sport"}}}, "en1,en2"},
		{index.Filter{"draft": true}, "fr1"},
		{index.Filter{"lang": "xx"}, ""},
	} {
		res := get(ix.Query(ctx, ref, index.Query{Vector: q, K: 10, Filter: c.f}))(t)
		var keys []string
		for _, r := range res {
			keys = append(keys, r.Key)
		}
		if got := strings.Join(keys, ","); got != c.want {
			t.Fatalf("filter %v: got %q, want %q", c.f, got, c.want)
		}
	}
	for _, c := range []struct {
		f     index.Filter
		words []string
	}{
		{index.Filter{"colour": "red"}, []string{`"colour"`, "not a filterable"}},
		{index.Filter{"text": "t"}, []string{`"text"`, "non-filterable"}},
		{index.Filter{"lang": map[string]any{"$regex": "e"}}, []string{"$regex"}},
		{index.Filter{"lang": map[string]any{"$in": []any{}}}, []string{"$in", "non-empty"}},
		{index.Filter{"lang": map[string]any{"a": 1}}, []string{"a"}},
		{index.Filter{"lang": []any{"en"}}, []string{"lang"}},
	} {
		_, err := ix.Query(ctx, ref, index.Query{Vector: q, K: 3, Filter: c.f})
		mustErr(t, err, index.ErrInvalid, c.words...)
	}
}

func ownerIsolation(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	alice := index.Ref{Owner: owner + "-alice", Name: "shared-name"}
	bob := index.Ref{Owner: owner + "-bob", Name: "shared-name"}
	get(ix.Open(ctx, alice, spec(2, index.Cosine)))(t)
	noErr(t, ix.Put(ctx, alice, []index.Vector{{Key: "secret", Data: []float32{1, 0}, Metadata: map[string]any{"k": "v"}}}))
	nf := func(err error) {
		t.Helper()
		mustErr(t, err, index.ErrNotFound, "shared-name")
	}
	_, err := ix.Describe(ctx, bob)
	nf(err)
	_, err = ix.Query(ctx, bob, index.Query{Vector: []float32{1, 0}, K: 1})
	nf(err)
	_, err = ix.Get(ctx, bob, []string{"secret"})
	nf(err)
	nf(ix.Put(ctx, bob, []index.Vector{{Key: "x", Data: []float32{1, 0}}}))
	nf(ix.Delete(ctx, bob, []string{"secret"}))
	nf(ix.Commit(ctx, bob, "job"))
	nf(ix.DeleteIndex(ctx, bob))
	if l := get(ix.List(ctx, bob.Owner))(t); len(l) != 0 {
		t.Fatalf("bob lists %+v", l)
	}
	// bob's own index of the same name is a different index
	get(ix.Open(ctx, bob, spec(3, index.Euclidean)))(t)
	if res := get(ix.Query(ctx, bob, index.Query{Vector: []float32{1, 0, 0}, K: 5}))(t); len(res) != 0 {
		t.Fatalf("bob sees %+v", res)
	}
	a := get(ix.Describe(ctx, alice))(t)
	if a.Dimension != 2 || a.Vectors != 1 {
		t.Fatalf("alice's index changed: %+v", a)
	}
	if l := get(ix.List(ctx, alice.Owner))(t); len(l) != 1 || l[0].Owner != alice.Owner {
		t.Fatalf("alice lists %+v", l)
	}
}

func limits(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	ref := index.Ref{Owner: owner, Name: "lim"}
	get(ix.Open(ctx, ref, spec(2, index.Cosine)))(t)
	noErr(t, ix.Put(ctx, ref, []index.Vector{{Key: "ok", Data: []float32{1, 1}}}))
	many := map[string]any{}
	for i := 0; i < 51; i++ {
		many[fmt.Sprintf("k%02d", i)] = i
	}
	for _, c := range []struct {
		name  string
		vecs  []index.Vector
		words []string
	}{
		{"dimension", []index.Vector{{Key: "a", Data: []float32{1, 2, 3}}}, []string{`"a"`, "dimension 3", "2"}},
		{"keys", []index.Vector{{Key: "a", Data: []float32{1, 0}, Metadata: many}}, []string{`"a"`, "51 keys", "50"}},
		{"filterable", []index.Vector{{Key: "a", Data: []float32{1, 0}, Metadata: map[string]any{"big": strings.Repeat("x", 2100)}}}, []string{`"a"`, "filterable", "2048"}},
		{"total", []index.Vector{{Key: "a", Data: []float32{1, 0}, Metadata: map[string]any{"text": strings.Repeat("x", 41000)}}}, []string{`"a"`, "40960"}},
		{"nested", []index.Vector{{Key: "a", Data: []float32{1, 0}, Metadata: map[string]any{"obj": map[string]any{"x": 1}}}}, []string{`"obj"`, "non-filterable"}},
		{"zero", []index.Vector{{Key: "a", Data: []float32{0, 0}}}, []string{`"a"`, "zero"}},
		{"nan", []index.Vector{{Key: "a", Data: []float32{float32(math.NaN()), 0}}}, []string{`"a"`, "finite"}},
		{"emptykey", []index.Vector{{Key: "", Data: []float32{1, 0}}}, []string{"key", "1024"}},
		{"longkey", []index.Vector{{Key: strings.Repeat("k", 1025), Data: []float32{1, 0}}}, []string{"key", "1024"}},
		{"duplicate", []index.Vector{{Key: "d", Data: []float32{1, 0}}, {Key: "d", Data: []float32{0, 1}}}, []string{`"d"`, "twice"}},
	} {
		// a good vector first: a refused write must leave nothing behind
		vecs := append([]index.Vector{{Key: "good-" + c.name, Data: []float32{1, 0}}}, c.vecs...)
		err := ix.Put(ctx, ref, vecs)
		mustErr(t, err, index.ErrInvalid, c.words...)
		if got := get(ix.Get(ctx, ref, []string{"good-" + c.name}))(t); len(got) != 0 {
			t.Fatalf("%s: refused write left %+v", c.name, got)
		}
	}
	if n := get(ix.Describe(ctx, ref))(t).Vectors; n != 1 {
		t.Fatalf("count after refused writes = %d, want 1", n)
	}
	// within limits: 40 KB non-filterable text and 50 keys are accepted
	fifty := map[string]any{"text": strings.Repeat("y", 30000)}
	for i := 0; i < 49; i++ {
		fifty[fmt.Sprintf("k%02d", i)] = float64(i)
	}
	noErr(t, ix.Put(ctx, ref, []index.Vector{{Key: "full", Data: []float32{1, 0}, Metadata: fifty}}))
	mustErr(t, ix.Commit(ctx, ref, ""), index.ErrInvalid, "job_id")
}

func describeAndList(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	a := index.Ref{Owner: owner, Name: "b-index"}
	b := index.Ref{Owner: owner, Name: "a-index"}
	get(ix.Open(ctx, a, spec(2, index.Cosine)))(t)
	get(ix.Open(ctx, b, index.Spec{Dimension: 3, Metric: index.Euclidean, Model: "cohere.embed-english-v3"}))(t)
	before := get(ix.Describe(ctx, a))(t)
	var vecs []index.Vector
	for i := 0; i < 7; i++ {
		vecs = append(vecs, index.Vector{Key: fmt.Sprint(i), Data: []float32{1, float32(i)}, Metadata: map[string]any{"i": float64(i)}})
	}
	noErr(t, ix.Put(ctx, a, vecs))
	after := get(ix.Describe(ctx, a))(t)
	if after.Vectors != 7 || after.UpdatedAt.Before(before.UpdatedAt) || !after.UpdatedAt.After(after.CreatedAt.Add(-1)) {
		t.Fatalf("after put: %+v (before %+v)", after, before)
	}
	if fmt.Sprint(after.FilterableKeys) != "[i]" {
		t.Fatalf("filterable keys %v", after.FilterableKeys)
	}
	l := get(ix.List(ctx, owner))(t)
	if len(l) != 2 || l[0].Name != "a-index" || l[1].Name != "b-index" {
		t.Fatalf("list %+v", l)
	}
	if l[0].Dimension != 3 || l[0].Metric != index.Euclidean || l[0].Model != "cohere.embed-english-v3" || l[0].Vectors != 0 {
		t.Fatalf("a-index listed as %+v", l[0])
	}
	if l[1].Vectors != 7 || l[1].Model != "amazon.titan-embed-text-v2:0" {
		t.Fatalf("b-index listed as %+v", l[1])
	}
}

func commitMarkers(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	ref := index.Ref{Owner: owner, Name: "c"}
	get(ix.Open(ctx, ref, spec(2, index.Cosine)))(t)
	noErr(t, ix.Put(ctx, ref, []index.Vector{{Key: "a", Data: []float32{1, 0}}}))
	if i := get(ix.Describe(ctx, ref))(t); len(i.CompletedJobs) != 0 || i.Committed("job-1") {
		t.Fatalf("before commit: %+v", i.CompletedJobs)
	}
	noErr(t, ix.Commit(ctx, ref, "job-1"))
	noErr(t, ix.Commit(ctx, ref, "job-2"))
	noErr(t, ix.Commit(ctx, ref, "job-1"))
	i := get(ix.Describe(ctx, ref))(t)
	if fmt.Sprint(i.CompletedJobs) != "[job-1 job-2]" || !i.Committed("job-2") || i.Committed("job-3") {
		t.Fatalf("completed %v", i.CompletedJobs)
	}
	if i.Vectors != 1 {
		t.Fatalf("commit changed count: %d", i.Vectors)
	}
	// the newest MaxCompletedJobs are kept
	for n := 0; n <= 200; n++ {
		noErr(t, ix.Commit(ctx, ref, fmt.Sprintf("bulk-%03d", n)))
	}
	jobs := get(ix.Describe(ctx, ref))(t).CompletedJobs
	if len(jobs) != index.MaxCompletedJobs || jobs[0] != "bulk-001" || jobs[len(jobs)-1] != "bulk-200" {
		t.Fatalf("%d completed jobs, from %s to %s", len(jobs), jobs[0], jobs[len(jobs)-1])
	}
}

func batching(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	ref := index.Ref{Owner: owner, Name: "batch"}
	get(ix.Open(ctx, ref, spec(8, index.Euclidean)))(t)
	const n = 1201
	vecs := make([]index.Vector, n)
	for i := range vecs {
		d := make([]float32, 8)
		d[i%8] = float32(i)
		d[(i+3)%8] = 1
		vecs[i] = index.Vector{Key: fmt.Sprintf("doc-%04d", i), Data: d, Metadata: map[string]any{"i": float64(i)}}
	}
	noErr(t, ix.Put(ctx, ref, vecs))
	if got := get(ix.Describe(ctx, ref))(t).Vectors; got != n {
		t.Fatalf("count %d, want %d", got, n)
	}
	last := get(ix.Get(ctx, ref, []string{"doc-0000", "doc-0500", "doc-1200"}))(t)
	if len(last) != 3 {
		t.Fatalf("got %+v", last)
	}
	res := get(ix.Query(ctx, ref, index.Query{Vector: vecs[777].Data, K: 1}))(t)
	if len(res) != 1 || res[0].Key != "doc-0777" || res[0].Distance > 1e-4 {
		t.Fatalf("nearest to doc-0777: %+v", res)
	}
	keys := make([]string, 0, 600)
	for i := 0; i < 600; i++ {
		keys = append(keys, vecs[i].Key)
	}
	noErr(t, ix.Delete(ctx, ref, keys))
	if got := get(ix.Describe(ctx, ref))(t).Vectors; got != n-600 {
		t.Fatalf("count after deleting 600: %d", got)
	}
}

func deleteIndex(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	ref := index.Ref{Owner: owner, Name: "gone"}
	get(ix.Open(ctx, ref, spec(2, index.Cosine)))(t)
	noErr(t, ix.Put(ctx, ref, []index.Vector{{Key: "a", Data: []float32{1, 0}}}))
	noErr(t, ix.DeleteIndex(ctx, ref))
	_, err := ix.Describe(ctx, ref)
	mustErr(t, err, index.ErrNotFound, "gone")
	mustErr(t, ix.DeleteIndex(ctx, ref), index.ErrNotFound, "gone")
	if l := get(ix.List(ctx, owner))(t); len(l) != 0 {
		t.Fatalf("list after delete: %+v", l)
	}
	i := get(ix.Open(ctx, ref, spec(4, index.Euclidean)))(t)
	if i.Vectors != 0 || i.Dimension != 4 {
		t.Fatalf("recreated: %+v", i)
	}
}

// ownerQuota: an owner holds at most MaxIndexesPerOwner indexes; one more is
// refused with the limit named, an existing one still opens, another owner is
// not affected, and deleting one makes room.
func ownerQuota(t *testing.T, ctx context.Context, ix index.Index, owner string) {
	for i := range index.MaxIndexesPerOwner {
		get(ix.Open(ctx, index.Ref{Owner: owner, Name: fmt.Sprintf("q%02d", i)}, spec(2, index.Cosine)))(t)
	}
	extra := index.Ref{Owner: owner, Name: "one-too-many"}
	_, err := ix.Open(ctx, extra, spec(2, index.Cosine))
	mustErr(t, err, index.ErrInvalid, fmt.Sprintf("at most %d vector indexes", index.MaxIndexesPerOwner), "delete_index")
	get(ix.Open(ctx, index.Ref{Owner: owner, Name: "q00"}, spec(2, index.Cosine)))(t)
	get(ix.Open(ctx, index.Ref{Owner: owner + "-other", Name: "q00"}, spec(2, index.Cosine)))(t)
	if l := get(ix.List(ctx, owner))(t); len(l) != index.MaxIndexesPerOwner {
		t.Fatalf("listed %d indexes, want %d", len(l), index.MaxIndexesPerOwner)
	}
	noErr(t, ix.DeleteIndex(ctx, index.Ref{Owner: owner, Name: "q07"}))
	get(ix.Open(ctx, extra, spec(2, index.Cosine)))(t)
}
