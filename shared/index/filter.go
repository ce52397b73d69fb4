package index

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Filter is the metadata filter of a Query, a subset of the S3 Vectors filter
// language: each key maps either to a value (equality) or to an object with one
// operator, "$eq": value or "$in": [values...]; several keys must all match.
// Values are strings, numbers or booleans. A key whose metadata is a list
// matches when any element matches (as in S3 Vectors).
//
//	{"lang": "en", "year": {"$in": [2024, 2025]}}
type Filter map[string]any

// Cond is one parsed filter condition.
type Cond struct {
	Key string
	// Op is "$eq" or "$in".
	Op     string
	Values []any
}

// ParseFilter checks f against the index's filterable keys and returns its
// conditions sorted by key. A key the index has never stored as filterable is
// refused, naming it.
func ParseFilter(info Info, f Filter) ([]Cond, error) {
	known := make(map[string]bool, len(info.FilterableKeys))
	for _, k := range info.FilterableKeys {
		known[k] = true
	}
	nonF := make(map[string]bool, len(info.NonFilterable))
	for _, k := range info.NonFilterable {
		nonF[k] = true
	}
	var out []Cond
	for k, v := range f {
		if nonF[k] {
			return nil, invalid("filter: key %q is non-filterable in index %q", k, info.Name)
		}
		if !known[k] {
			return nil, invalid("filter: key %q is not a filterable metadata key of index %q (known: %v)", k, info.Name, info.FilterableKeys)
		}
		c := Cond{Key: k, Op: "$eq"}
		if obj, ok := v.(map[string]any); ok {
			if len(obj) != 1 {
				return nil, invalid("filter: key %q: give exactly one operator ($eq or $in)", k)
			}
			for op, arg := range obj {
				switch op {
				case "$eq":
					c.Values = []any{arg}
				case "$in":
					list, ok := arg.([]any)
					if !ok || len(list) == 0 {
						return nil, invalid("filter: key %q: $in takes a non-empty list", k)
					}
					if len(list) > 100 {
						return nil, invalid("filter: key %q: $in lists %d values, limit 100", k, len(list))
					}
					c.Op, c.Values = "$in", list
				default:
					return nil, invalid("filter: key %q: operator %q is not supported ($eq, $in)", k, op)
				}
			}
		} else {
			c.Values = []any{v}
		}
		for _, x := range c.Values {
			if err := checkScalar(x); err != nil {
				return nil, invalid("filter: key %q: %v", k, err)
			}
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func checkScalar(v any) error {
	switch v.(type) {
	case string, bool, float64, float32, int, int64, int32, json.Number:
		return nil
	}
	return fmt.Errorf("value of type %T is not a string, number or boolean", v)
}

// S3Document renders conditions as an S3 Vectors filter document:
// {"k":{"$eq":v}} or {"k":{"$in":[...]}}, several joined with "$and"; nil for none.
func S3Document(conds []Cond) map[string]any {
	one := func(c Cond) map[string]any {
		if c.Op == "$in" {
			return map[string]any{c.Key: map[string]any{"$in": c.Values}}
		}
		return map[string]any{c.Key: map[string]any{"$eq": c.Values[0]}}
	}
	switch len(conds) {
	case 0:
		return nil
	case 1:
		return one(conds[0])
	}
	all := make([]any, len(conds))
	for i, c := range conds {
		all[i] = one(c)
	}
	return map[string]any{"$and": all}
}
