package summary

import (
	"encoding/json"
	"strings"
)

// member is the value of the member name of the JSON object doc (false:
// doc is not an object or has no such member). output_json is valid,
// compact JSON (checked when it was stored), so a scan that skips values
// is enough, and costs a fraction of decoding each record into a map.
func member(doc []byte, name string) ([]byte, bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipSpace(doc, i)
		if i >= len(doc) || doc[i] != '"' {
			return nil, false
		}
		end := skipString(doc, i)
		key := doc[i+1 : end-1]
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return nil, false
		}
		i = skipSpace(doc, i+1)
		vend := skipValue(doc, i)
		if vend <= i {
			return nil, false
		}
		if keyIs(key, name) {
			return doc[i:vend], true
		}
		i = skipSpace(doc, vend)
		if i >= len(doc) || doc[i] != ',' {
			return nil, false
		}
		i++
	}
}

// keyIs compares a raw object key with name, decoding escapes when it has any.
func keyIs(raw []byte, name string) bool {
	if !strings.ContainsRune(string(raw), '\\') {
		return string(raw) == name
	}
	var k string
	return json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &k) == nil && k == name
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString is the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue is the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\t' && b[i] != '\r' {
		i++
	}
	return i
}
