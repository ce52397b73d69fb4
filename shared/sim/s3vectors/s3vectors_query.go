package s3vectors

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
)

func (s *S3VectorsSim) queryVectors(body []byte) (any, *s3vError) {
	var in struct {
		s3vTarget
		TopK        *int `json:"topK"`
		QueryVector *struct {
			Float32 []float32 `json:"float32"`
		} `json:"queryVector"`
		Filter         json.RawMessage `json:"filter"`
		ReturnDistance bool            `json:"returnDistance"`
		ReturnMetadata bool            `json:"returnMetadata"`
	}
	if e := decode(body, &in); e != nil {
		return nil, e
	}
	if in.TopK == nil || *in.TopK < 1 || *in.TopK > s3vRules.MaxTopK {
		return nil, s3vValidation("topK must be between 1 and %d", s3vRules.MaxTopK)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ix, e := s.resolve(in.s3vTarget, true)
	if e != nil {
		return nil, e
	}
	if in.QueryVector == nil || len(in.QueryVector.Float32) != ix.dim {
		n := 0
		if in.QueryVector != nil {
			n = len(in.QueryVector.Float32)
		}
		return nil, s3vValidation("queryVector has dimension %d, index %q has dimension %d", n, ix.name, ix.dim)
	}
	var pred s3vPred
	if len(in.Filter) > 0 && string(in.Filter) != "null" {
		var doc any
		if err := json.Unmarshal(in.Filter, &doc); err != nil {
			return nil, s3vValidation("filter is not valid JSON: %v", err)
		}
		p, err := ix.compileFilter(doc)
		if err != nil {
			return nil, s3vValidation("invalid filter: %v", err)
		}
		pred = p
	}
	hits := ix.search(in.QueryVector.Float32, *in.TopK, pred)
	out := make([]any, len(hits))
	for i, h := range hits {
		v := map[string]any{"key": ix.slot[h.slot]}
		if in.ReturnDistance {
			v["distance"] = h.dist
		}
		if in.ReturnMetadata && ix.meta[h.slot] != nil {
			v["metadata"] = ix.meta[h.slot]
		}
		out[i] = v
	}
	return map[string]any{"vectors": out, "distanceMetric": ix.metric()}, nil
}

type s3vHit struct {
	dist float32
	slot int32
}

// topK keeps the k smallest distances in a max-heap, preallocated.
type topK struct {
	h []s3vHit
	k int
}

func (t *topK) offer(d float32, slot int) {
	if len(t.h) < t.k {
		t.h = append(t.h, s3vHit{d, int32(slot)})
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if t.h[p].dist >= t.h[i].dist {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if d >= t.h[0].dist {
		return
	}
	t.h[0] = s3vHit{d, int32(slot)}
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(t.h) && t.h[l].dist > t.h[m].dist {
			m = l
		}
		if r < len(t.h) && t.h[r].dist > t.h[m].dist {
			m = r
		}
		if m == i {
			break
		}
		t.h[m], t.h[i] = t.h[i], t.h[m]
		i = m
	}
}

// search is exact: every live slot is scored, split over the available cores,
// each worker keeping its own top k, merged at the end.
func (ix *s3vIndex) search(q []float32, k int, pred s3vPred) []s3vHit {
	n := len(ix.slot)
	var qn float32
	for _, x := range q {
		qn += x * x
	}
	qn = float32(math.Sqrt(float64(qn)))
	workers := runtime.GOMAXPROCS(0)
	if n < 4096 {
		workers = 1
	}
	tops := make([]topK, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		tops[w] = topK{h: make([]s3vHit, 0, k), k: k}
		wg.Add(1)
		go func(t *topK) {
			defer wg.Done()
			dim := ix.dim
			for slot := lo; slot < hi; slot++ {
				if ix.slot[slot] == "" || (pred != nil && !pred(ix.meta[slot])) {
					continue
				}
				v := ix.data[slot*dim : (slot+1)*dim : (slot+1)*dim]
				var d float32
				if ix.cosine {
					d = 1 - dot(v, q)/(ix.norms[slot]*qn)
				} else {
					d = float32(math.Sqrt(float64(sqDist(v, q))))
				}
				t.offer(d, slot)
			}
		}(&tops[w])
	}
	wg.Wait()
	all := tops[0].h
	for _, t := range tops[1:] {
		all = append(all, t.h...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].dist != all[j].dist {
			return all[i].dist < all[j].dist
		}
		return ix.slot[all[i].slot] < ix.slot[all[j].slot]
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

func sqDist(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0, d1, d2, d3 := a[i]-b[i], a[i+1]-b[i+1], a[i+2]-b[i+2], a[i+3]-b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return s0 + s1 + s2 + s3
}

// s3vPred tests a vector's metadata against a compiled filter.
type s3vPred func(map[string]any) bool

// compileFilter turns an S3 Vectors filter document into a predicate. Operators
// ($eq $ne $gt $gte $lt $lte $in $nin $exists $and $or, and a bare value for
// $eq) as in s3-vectors-metadata-filtering.html; a key declared non-filterable
// is refused.
func (ix *s3vIndex) compileFilter(doc any) (s3vPred, error) {
	obj, ok := doc.(map[string]any)
	if !ok || len(obj) == 0 {
		return nil, fmt.Errorf("a filter is a non-empty JSON object")
	}
	var preds []s3vPred
	for k, v := range obj {
		switch k {
		case "$and", "$or":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("%s takes a non-empty array of filters", k)
			}
			subs := make([]s3vPred, len(list))
			for i, d := range list {
				p, err := ix.compileFilter(d)
				if err != nil {
					return nil, err
				}
				subs[i] = p
			}
			and := k == "$and"
			preds = append(preds, func(m map[string]any) bool {
				for _, p := range subs {
					if p(m) != and {
						return !and
					}
				}
				return and
			})
		default:
			if len(k) > 0 && k[0] == '$' {
				return nil, fmt.Errorf("unknown operator %q", k)
			}
			if ix.nonFilt[k] {
				return nil, fmt.Errorf("metadata key %q is non-filterable", k)
			}
			p, err := fieldPred(k, v)
			if err != nil {
				return nil, err
			}
			preds = append(preds, p)
		}
	}
	if len(preds) == 1 {
		return preds[0], nil
	}
	return func(m map[string]any) bool {
		for _, p := range preds {
			if !p(m) {
				return false
			}
		}
		return true
	}, nil
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, float64, bool:
		return true
	}
	return false
}

func fieldPred(key string, v any) (s3vPred, error) {
	ops, ok := v.(map[string]any)
	if !ok {
		if !isScalar(v) {
			return nil, fmt.Errorf("%q: a bare value must be a string, number or boolean", key)
		}
		return func(m map[string]any) bool { return anyElem(m[key], func(x any) bool { return x == v }) }, nil
	}
	if len(ops) != 1 {
		return nil, fmt.Errorf("%q: give one operator per key", key)
	}
	for op, arg := range ops {
		switch op {
		case "$eq", "$ne":
			if !isScalar(arg) {
				return nil, fmt.Errorf("%q: %s takes a string, number or boolean", key, op)
			}
			eq := func(m map[string]any) bool { return anyElem(m[key], func(x any) bool { return x == arg }) }
			if op == "$eq" {
				return eq, nil
			}
			return func(m map[string]any) bool { _, has := m[key]; return has && !eq(m) }, nil
		case "$gt", "$gte", "$lt", "$lte":
			n, ok := arg.(float64)
			if !ok {
				return nil, fmt.Errorf("%q: %s takes a number", key, op)
			}
			cmp := map[string]func(float64) bool{
				"$gt": func(x float64) bool { return x > n }, "$gte": func(x float64) bool { return x >= n },
				"$lt": func(x float64) bool { return x < n }, "$lte": func(x float64) bool { return x <= n },
			}[op]
			return func(m map[string]any) bool {
				x, ok := m[key].(float64)
				return ok && cmp(x)
			}, nil
		case "$in", "$nin":
			list, ok := arg.([]any)
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("%q: %s takes a non-empty array", key, op)
			}
			for _, e := range list {
				if !isScalar(e) {
					return nil, fmt.Errorf("%q: %s elements must be strings, numbers or booleans", key, op)
				}
			}
			in := func(m map[string]any) bool {
				return anyElem(m[key], func(x any) bool {
					for _, e := range list {
						if x == e {
							return true
						}
					}
					return false
				})
			}
			if op == "$in" {
				return in, nil
			}
			return func(m map[string]any) bool { _, has := m[key]; return has && !in(m) }, nil
		case "$exists":
			want, ok := arg.(bool)
			if !ok {
				return nil, fmt.Errorf("%q: $exists takes a boolean", key)
			}
			return func(m map[string]any) bool { _, has := m[key]; return has == want }, nil
		default:
			return nil, fmt.Errorf("%q: unknown operator %q", key, op)
		}
	}
	return nil, fmt.Errorf("%q: no operator", key)
}

// anyElem applies f to v, or to each element when v is a list (a list value
// matches when any element does).
func anyElem(v any, f func(any) bool) bool {
	if list, ok := v.([]any); ok {
		for _, e := range list {
			if f(e) {
				return true
			}
		}
		return false
	}
	return v != nil && f(v)
}
