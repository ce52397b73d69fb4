package outschema

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// decode is the ingest path's one pass over an output: it parses one JSON
// value into what json.Unmarshal gives an `any` (map[string]any, []any,
// string, float64, bool, nil) and, in the same pass, the value as
// json.Compact writes it. Strings without escapes and an output already
// compact are substrings of s: no copies. ok is false for anything off its
// fast path (invalid JSON, a surrogate escape, invalid UTF-8, a number out
// of float64's range, deep nesting): the caller then asks encoding/json,
// whose verdict and error message stand, so this never changes an answer.
func decode(s string) (v any, compact string, ok bool) {
	d := decoder{s: s}
	d.space()
	v, ok = d.value()
	if !ok {
		return nil, "", false
	}
	d.space()
	if d.pos != len(s) {
		return nil, "", false
	}
	if d.out == nil {
		return v, s[d.from:d.pos], true
	}
	d.out = append(d.out, s[d.from:d.pos]...)
	return v, string(d.out), true
}

// maxDecodeDepth bounds nesting on the fast path (encoding/json takes
// deeper values, which then go its way).
const maxDecodeDepth = 512

type decoder struct {
	s     string
	pos   int
	depth int
	// out is the compact copy once whitespace had to be dropped (nil while
	// s[from:pos] is all there is); s[from:pos] is not yet in it.
	out  []byte
	from int
}

// space skips JSON whitespace, cutting it out of the compact copy.
func (d *decoder) space() {
	start := d.pos
	for d.pos < len(d.s) {
		switch d.s[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
			continue
		}
		break
	}
	if d.pos == start {
		return
	}
	if d.out == nil {
		if start == 0 { // leading whitespace: the compact value starts after it
			d.from = d.pos
			return
		}
		d.out = make([]byte, 0, len(d.s))
	}
	d.out = append(d.out, d.s[d.from:start]...)
	d.from = d.pos
}

func (d *decoder) value() (any, bool) {
	if d.pos >= len(d.s) {
		return nil, false
	}
	switch c := d.s[d.pos]; {
	case c == '{':
		return d.object()
	case c == '[':
		return d.array()
	case c == '"':
		str, ok := d.str()
		return str, ok
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	case strings.HasPrefix(d.s[d.pos:], "true"):
		d.pos += 4
		return true, true
	case strings.HasPrefix(d.s[d.pos:], "false"):
		d.pos += 5
		return false, true
	case strings.HasPrefix(d.s[d.pos:], "null"):
		d.pos += 4
		return nil, true
	}
	return nil, false
}

func (d *decoder) object() (any, bool) {
	m := map[string]any{}
	ok := d.elements('}', func() bool {
		if d.pos >= len(d.s) || d.s[d.pos] != '"' {
			return false
		}
		k, ok := d.str()
		if !ok {
			return false
		}
		d.space()
		if d.pos >= len(d.s) || d.s[d.pos] != ':' {
			return false
		}
		d.pos++
		d.space()
		v, ok := d.value()
		m[k] = v // a repeated key: the last wins, as in json.Unmarshal
		return ok
	})
	if !ok {
		return nil, false
	}
	return m, true
}

func (d *decoder) array() (any, bool) {
	a := []any{}
	ok := d.elements(']', func() bool {
		v, ok := d.value()
		a = append(a, v)
		return ok
	})
	if !ok {
		return nil, false
	}
	return a, true
}

// elements reads an object's members or an array's values at d.pos (its
// opening bracket) up to end, each by one call of each.
func (d *decoder) elements(end byte, each func() bool) bool {
	if d.depth++; d.depth > maxDecodeDepth {
		return false
	}
	defer func() { d.depth-- }()
	d.pos++
	d.space()
	if d.pos < len(d.s) && d.s[d.pos] == end {
		d.pos++
		return true
	}
	for {
		if !each() {
			return false
		}
		d.space()
		if d.pos >= len(d.s) {
			return false
		}
		switch d.s[d.pos] {
		case ',':
			d.pos++
			d.space()
		case end:
			d.pos++
			return true
		default:
			return false
		}
	}
}

// str reads a string at d.pos (its opening quote).
func (d *decoder) str() (string, bool) {
	start := d.pos + 1
	i := start
	for i < len(d.s) {
		switch c := d.s[i]; {
		case c == '"':
			d.pos = i + 1
			return d.s[start:i], true
		case c == '\\':
			return d.escaped(start, i)
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRuneInString(d.s[i:])
			if r == utf8.RuneError && n == 1 {
				return "", false // json.Unmarshal replaces it with U+FFFD: its way
			}
			i += n
		}
	}
	return "", false
}

// escaped goes on with a string that has an escape at i.
func (d *decoder) escaped(start, i int) (string, bool) {
	b := make([]byte, 0, len(d.s)-start)
	b = append(b, d.s[start:i]...)
	for i < len(d.s) {
		c := d.s[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return string(b), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if i+1 >= len(d.s) {
				return "", false
			}
			switch e := d.s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				if i+6 > len(d.s) {
					return "", false
				}
				r, err := strconv.ParseUint(d.s[i+2:i+6], 16, 32)
				if err != nil || r >= 0xD800 && r < 0xE000 {
					return "", false // surrogates (pairs or lone): encoding/json's way
				}
				b = utf8.AppendRune(b, rune(r))
				i += 4
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(d.s[i:])
			if r == utf8.RuneError && n == 1 {
				return "", false
			}
			b = append(b, d.s[i:i+n]...)
			i += n
		}
	}
	return "", false
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? as a float64.
func (d *decoder) number() (any, bool) {
	s, i := d.s, d.pos
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return nil, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		if j == i+1 {
			return nil, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return nil, false
		}
		i = j
	}
	f, err := strconv.ParseFloat(s[d.pos:i], 64)
	if err != nil {
		return nil, false // out of range: json.Unmarshal refuses it, with its message
	}
	d.pos = i
	return f, true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
