package bedrock

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A small validating JSON scanner for the hot path of ingest. encoding/json
// scans every byte twice (validation, then decoding) through a state machine,
// which caps a 2 KB output line near 60 MB/s; most of a line is the echoed
// modelInput, which ingest never needs. This scanner checks the grammar of
// everything it skips but builds nothing, and decodes only the few fields kept.

var errSyntax = errors.New("invalid JSON")

func syntaxErr(b []byte, i int, what string) error {
	if i >= len(b) {
		return fmt.Errorf("%w: unexpected end of line, want %s", errSyntax, what)
	}
	return fmt.Errorf("%w at offset %d: want %s, got %q", errSyntax, i, what, b[i])
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString reads the string starting at b[i] == '"'. It returns the bytes
// between the quotes, whether they hold escapes, and the index after the closing quote.
func scanString(b []byte, i int) (raw []byte, escaped bool, next int, err error) {
	if i >= len(b) || b[i] != '"' {
		return nil, false, i, syntaxErr(b, i, "a string")
	}
	start := i + 1
	for j := start; j < len(b); j++ {
		// Most bytes are plain: one table load per byte in the tight loop.
		for j < len(b) && plain[b[j]] {
			j++
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			return b[start:j], escaped, j + 1, nil
		case c == '\\':
			escaped = true
			j++
			if j >= len(b) {
				return nil, false, j, syntaxErr(b, j, "an escape")
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex4(b[j+1:j+5]) {
					return nil, false, j, syntaxErr(b, j, "four hex digits after \\u")
				}
				j += 4
			default:
				return nil, false, j, syntaxErr(b, j, "a valid escape")
			}
		default: // a control character
			return nil, false, j, syntaxErr(b, j, "no control character in a string")
		}
	}
	return nil, false, len(b), syntaxErr(b, len(b), `a closing '"'`)
}

// plain marks the bytes a string holds as they are: not '"', '\\' or a control character.
var plain = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func isHex4(h []byte) bool {
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// decodeString turns scanned string bytes into a Go string as encoding/json
// does: escapes resolved, invalid UTF-8 and lone surrogates become U+FFFD.
func decodeString(raw []byte, escaped bool) string {
	if !escaped && utf8.Valid(raw) {
		return string(raw)
	}
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				out = append(out, c)
				i++
				continue
			}
			r, size := utf8.DecodeRune(raw[i:])
			out = utf8.AppendRune(out, r) // RuneError for a bad byte, as encoding/json
			i += size
			continue
		}
		i++ // scanString checked every escape
		switch raw[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hexRune(raw[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) {
				// A pair goes on with a second \uXXXX; anything else leaves U+FFFD.
				if i+7 <= len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if dec := utf16.DecodeRune(r, hexRune(raw[i+3:i+7])); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 7
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, raw[i])
		}
		i++
	}
	return string(out)
}

func hexRune(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// scanNumber reads a JSON number at b[i].
func scanNumber(b []byte, i int) (next int, err error) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return i, syntaxErr(b, i, "a digit")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, syntaxErr(b, i, "a digit after '.'")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return i, syntaxErr(b, i, "an exponent")
		}
	}
	return i, nil
}

// maxDepth bounds nesting, as encoding/json does, so a hostile line cannot
// exhaust the stack.
const maxDepth = 10000

// skipValue checks and skips the value at b[i] (after whitespace).
func skipValue(b []byte, i int) (int, error) { return skipValueDepth(b, i, 0) }

func skipValueDepth(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return i, fmt.Errorf("%w: nested too deeply", errSyntax)
	}
	i = skipWS(b, i)
	if i >= len(b) {
		return i, syntaxErr(b, i, "a value")
	}
	switch c := b[i]; {
	case c == '"':
		_, _, next, err := scanString(b, i)
		return next, err
	case c == '{':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			var err error
			if _, _, i, err = scanString(b, skipWS(b, i)); err != nil {
				return i, err
			}
			if i = skipWS(b, i); i >= len(b) || b[i] != ':' {
				return i, syntaxErr(b, i, "':'")
			}
			if i, err = skipValueDepth(b, i+1, depth+1); err != nil {
				return i, err
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i++
				continue
			}
			if i < len(b) && b[i] == '}' {
				return i + 1, nil
			}
			return i, syntaxErr(b, i, "',' or '}'")
		}
	case c == '[':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValueDepth(b, i, depth+1); err != nil {
				return i, err
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i++
				continue
			}
			if i < len(b) && b[i] == ']' {
				return i + 1, nil
			}
			return i, syntaxErr(b, i, "',' or ']'")
		}
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, syntaxErr(b, i, "a value")
}

func literal(b []byte, i int, word string) (int, error) {
	if len(b)-i >= len(word) && string(b[i:i+len(word)]) == word {
		return i + len(word), nil
	}
	return i, syntaxErr(b, i, word)
}

// eachMember calls fn for every member of the object at b[i]; fn gets the value's
// index and returns the index after the value (it must consume it).
func eachMember(b []byte, i int, fn func(key []byte, at int) (int, error)) (int, error) {
	i = skipWS(b, i)
	if i >= len(b) || b[i] != '{' {
		return i, syntaxErr(b, i, "an object")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		raw, esc, next, err := scanString(b, skipWS(b, i))
		if err != nil {
			return next, err
		}
		key := raw
		if esc {
			key = []byte(decodeString(raw, esc)) // rare: keys are plain ASCII
		}
		if i = skipWS(b, next); i >= len(b) || b[i] != ':' {
			return i, syntaxErr(b, i, "':'")
		}
		if i, err = fn(key, skipWS(b, i+1)); err != nil {
			return i, err
		}
		i = skipWS(b, i)
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		return i, syntaxErr(b, i, "',' or '}'")
	}
}

// readString reads a string value (wrong type: an error naming field).
func readString(b []byte, i int, field string) (string, int, error) {
	if i < len(b) && b[i] != '"' {
		return "", i, fmt.Errorf("%s: want a string, got %q", field, b[i])
	}
	raw, esc, next, err := scanString(b, i)
	if err != nil {
		return "", next, err
	}
	return decodeString(raw, esc), next, nil
}

// readStringOrNull is readString that reads null as "".
func readStringOrNull(b []byte, i int, field string) (string, int, error) {
	if i < len(b) && b[i] == 'n' {
		next, err := literal(b, i, "null")
		return "", next, err
	}
	return readString(b, i, field)
}

// readInt reads an integer value into an int64, as encoding/json would.
func readInt(b []byte, i int, field string) (int64, int, error) {
	if i < len(b) && b[i] == 'n' {
		next, err := literal(b, i, "null")
		return 0, next, err
	}
	next, err := scanNumber(b, i)
	if err != nil {
		return 0, next, fmt.Errorf("%s: want a number: %w", field, err)
	}
	n, err := strconv.ParseInt(string(b[i:next]), 10, 64)
	if err != nil {
		return 0, next, fmt.Errorf("%s: want an integer, got %s", field, b[i:next])
	}
	return n, next, nil
}
