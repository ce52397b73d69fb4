package content

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// A small reader for the messages shape. encoding/json scans every byte
// through its state machine several times for nested values (~35 ms per pass
// over a 5 MB PDF as base64); this reader finds the end of a string with
// IndexByte, so a long base64 payload costs a memchr and a copy.

type lexer struct {
	b []byte
	i int
}

var errSyntax = errors.New("invalid JSON")

func (l *lexer) ws() {
	for l.i < len(l.b) {
		switch l.b[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		default:
			return
		}
	}
}

func (l *lexer) peek() byte {
	l.ws()
	if l.i >= len(l.b) {
		return 0
	}
	return l.b[l.i]
}

func (l *lexer) expect(c byte) error {
	if l.peek() != c {
		return fmt.Errorf("%w: expected %q at offset %d", errSyntax, c, l.i)
	}
	l.i++
	return nil
}

// strEnd returns the index just past the closing quote of the string at l.i
// and whether it holds escapes.
func (l *lexer) strEnd() (int, bool, error) {
	if l.peek() != '"' {
		return 0, false, fmt.Errorf("%w: expected a string at offset %d", errSyntax, l.i)
	}
	j := l.i + 1
	escaped := false
	for {
		k := bytes.IndexByte(l.b[j:], '"')
		if k < 0 {
			return 0, false, fmt.Errorf("%w: unterminated string", errSyntax)
		}
		end := j + k
		// count the backslashes just before the quote
		n := 0
		for p := end - 1; p > l.i && l.b[p] == '\\'; p-- {
			n++
		}
		if bytes.IndexByte(l.b[j:end], '\\') >= 0 {
			escaped = true
		}
		if n%2 == 0 {
			return end + 1, escaped, nil
		}
		j = end + 1
	}
}

func (l *lexer) str() (string, error) {
	end, escaped, err := l.strEnd()
	if err != nil {
		return "", err
	}
	raw := l.b[l.i:end]
	l.i = end
	if !escaped {
		for _, c := range raw[1 : len(raw)-1] {
			if c < 0x20 {
				return "", fmt.Errorf("%w: control character in string", errSyntax)
			}
		}
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// skip passes over one value and returns its bytes.
func (l *lexer) skip() ([]byte, error) {
	start := l.peek()
	from := l.i
	switch start {
	case '"':
		end, _, err := l.strEnd()
		if err != nil {
			return nil, err
		}
		l.i = end
	case '{', '[':
		depth := 0
		for l.i < len(l.b) {
			switch c := l.b[l.i]; c {
			case '"':
				end, _, err := l.strEnd()
				if err != nil {
					return nil, err
				}
				l.i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			l.i++
			if depth == 0 {
				return l.b[from:l.i], nil
			}
		}
		return nil, fmt.Errorf("%w: unterminated value", errSyntax)
	case 0:
		return nil, fmt.Errorf("%w: unexpected end", errSyntax)
	default:
		for l.i < len(l.b) && bytes.IndexByte([]byte(",}] \t\r\n"), l.b[l.i]) < 0 {
			l.i++
		}
	}
	v := l.b[from:l.i]
	if start != '"' && !json.Valid(v) {
		return nil, fmt.Errorf("%w: bad value %q", errSyntax, v)
	}
	return v, nil
}

// object calls f for each key, with the lexer at the value; f must consume it.
func (l *lexer) object(f func(key string) error) error {
	if err := l.expect('{'); err != nil {
		return err
	}
	if l.peek() == '}' {
		l.i++
		return nil
	}
	for {
		k, err := l.str()
		if err != nil {
			return err
		}
		if err := l.expect(':'); err != nil {
			return err
		}
		if err := f(k); err != nil {
			return err
		}
		switch l.peek() {
		case ',':
			l.i++
		case '}':
			l.i++
			return nil
		default:
			return fmt.Errorf("%w: expected , or } at offset %d", errSyntax, l.i)
		}
	}
}

// array calls f for each element index, with the lexer at the element.
func (l *lexer) array(f func(i int) error) error {
	if err := l.expect('['); err != nil {
		return err
	}
	if l.peek() == ']' {
		l.i++
		return nil
	}
	for i := 0; ; i++ {
		if err := f(i); err != nil {
			return err
		}
		switch l.peek() {
		case ',':
			l.i++
		case ']':
			l.i++
			return nil
		default:
			return fmt.Errorf("%w: expected , or ] at offset %d", errSyntax, l.i)
		}
	}
}

// optStr reads a string, or null as "".
func (l *lexer) optStr() (string, error) {
	if l.peek() == 'n' {
		_, err := l.skip()
		return "", err
	}
	return l.str()
}

// readBlock reads one content block into w (raw is the block's bytes).
func (l *lexer) readBlock(w *wireBlock) (raw []byte, err error) {
	l.ws()
	start := l.i
	err = l.object(func(k string) error {
		var err error
		switch k {
		case "type":
			w.Type, err = l.optStr()
		case "text":
			var s string
			if s, err = l.str(); err == nil {
				w.Text = &s
			}
		case "name":
			w.Name, err = l.optStr()
		case "title":
			w.Title, err = l.optStr()
		case "cache_control":
			var v []byte
			if v, err = l.skip(); err == nil {
				w.CacheControl = json.RawMessage(v)
			}
		case "source":
			if l.peek() != '{' {
				_, err = l.skip()
				return err
			}
			w.Source = &wireSource{}
			err = l.object(func(k string) error {
				var err error
				switch k {
				case "type":
					w.Source.Type, err = l.optStr()
				case "media_type":
					w.Source.MediaType, err = l.optStr()
				case "data":
					w.Source.Data, err = l.optStr()
				case "uri":
					w.Source.URI, err = l.optStr()
				default:
					_, err = l.skip()
				}
				return err
			})
		default:
			_, err = l.skip()
		}
		return err
	})
	return l.b[start:l.i], err
}
