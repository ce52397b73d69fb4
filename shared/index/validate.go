package index

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// CheckVectors validates vectors for an index before anything is sent, and
// returns the filterable metadata keys they carry. Errors name the vector key,
// the field and the limit.
func CheckVectors(info Info, vecs []Vector) (filterable []string, err error) {
	nonF := make(map[string]bool, len(info.NonFilterable))
	for _, k := range info.NonFilterable {
		nonF[k] = true
	}
	seen := map[string]bool{}
	dup := make(map[string]bool, len(vecs))
	for i, v := range vecs {
		if v.Key == "" || len(v.Key) > MaxKeyLen {
			return nil, invalid("vectors[%d].key: must be 1..%d characters", i, MaxKeyLen)
		}
		if dup[v.Key] {
			return nil, invalid("vectors[%d].key: %q appears twice in one write", i, v.Key)
		}
		dup[v.Key] = true
		if len(v.Data) != info.Dimension {
			return nil, invalid("vector %q: dimension %d, index %q has dimension %d", v.Key, len(v.Data), info.Name, info.Dimension)
		}
		var norm float64
		for j, x := range v.Data {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, invalid("vector %q: data[%d] is not a finite number", v.Key, j)
			}
			norm += float64(x) * float64(x)
		}
		if info.Metric == Cosine && norm == 0 {
			return nil, invalid("vector %q: all zeros has no cosine direction", v.Key)
		}
		if len(v.Metadata) > MaxMetadataKeys {
			return nil, invalid("vector %q: metadata has %d keys, limit %d", v.Key, len(v.Metadata), MaxMetadataKeys)
		}
		total, fsize := 0, 0
		for k, val := range v.Metadata {
			b, err := json.Marshal(val)
			if err != nil {
				return nil, invalid("vector %q: metadata %q: %v", v.Key, k, err)
			}
			n := len(k) + len(b)
			total += n
			if nonF[k] {
				continue
			}
			if err := checkFilterableValue(val); err != nil {
				return nil, invalid("vector %q: metadata %q: %v (declare it non-filterable at creation to store other JSON)", v.Key, k, err)
			}
			fsize += n
			seen[k] = true
		}
		if total > MaxMetadataBytes {
			return nil, invalid("vector %q: metadata is %d bytes, limit %d (40 KB)", v.Key, total, MaxMetadataBytes)
		}
		if fsize > MaxFilterableBytes {
			return nil, invalid("vector %q: filterable metadata is %d bytes, limit %d (2 KB); declare large keys non-filterable", v.Key, fsize, MaxFilterableBytes)
		}
	}
	for k := range seen {
		filterable = append(filterable, k)
	}
	sort.Strings(filterable)
	return filterable, nil
}

// checkFilterableValue admits what S3 Vectors filters on: strings, numbers,
// booleans and lists of those.
func checkFilterableValue(v any) error {
	switch x := v.(type) {
	case string, bool, float64, float32, int, int64, int32, json.Number:
		return nil
	case []any:
		for _, e := range x {
			switch e.(type) {
			case string, bool, float64, float32, int, int64, int32, json.Number:
			default:
				return fmt.Errorf("list element of type %T is not a string, number or boolean", e)
			}
		}
		return nil
	case []string, []float64, []int:
		return nil
	default:
		return fmt.Errorf("value of type %T is not a string, number, boolean or list of those", v)
	}
}

// Batches splits vecs into writes of ≤ MaxVectorsPerPut vectors and about
// ≤ MaxRequestBytes of JSON each (data estimated at 16 bytes per float, as the
// SDK writes shortest-form float32 text, plus the metadata's JSON).
func Batches(vecs []Vector) [][]Vector {
	const budget = MaxRequestBytes - 64<<10 // room for the envelope
	var out [][]Vector
	start, size := 0, 0
	for i, v := range vecs {
		n := vectorBytes(v)
		if i > start && (i-start == MaxVectorsPerPut || size+n > budget) {
			out = append(out, vecs[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(vecs) {
		out = append(out, vecs[start:])
	}
	return out
}

func vectorBytes(v Vector) int {
	n := 64 + len(v.Key) + 16*len(v.Data)
	if len(v.Metadata) > 0 {
		b, _ := json.Marshal(v.Metadata)
		n += len(b)
	}
	return n
}

// Chunks splits keys into groups of at most n.
func Chunks(keys []string, n int) [][]string {
	var out [][]string
	for len(keys) > n {
		out = append(out, keys[:n])
		keys = keys[n:]
	}
	if len(keys) > 0 {
		out = append(out, keys)
	}
	return out
}

// MergeKeys returns the sorted union of two key sets.
func MergeKeys(a, b []string) []string {
	m := make(map[string]bool, len(a)+len(b))
	for _, k := range a {
		m[k] = true
	}
	for _, k := range b {
		m[k] = true
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ScoreOf turns a distance into the higher-is-better score of Match.
func ScoreOf(m Metric, distance float64) float64 {
	if m == Cosine {
		return 1 - distance
	}
	return 1 / (1 + distance)
}
