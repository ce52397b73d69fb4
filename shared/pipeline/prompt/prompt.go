// Package prompt runs pipeline prompt templates: Go text/template syntax,
// parsed by text/template/parse, evaluated here without reflection over
// JSON-shaped data (map[string]any, []any, string, float64, int, bool, nil).
//
// Why not text/template itself: its executor looks methods up by name at run
// time (reflect.Value.MethodByName), and a binary that can reach such a call
// keeps every exported method of every linked type; in the nightly-report
// Lambda that was 13 MB of its 32 MB. Prompts only read fields of a document
// and of its parsed JSON, so a small evaluator does the same work.
//
// Supported: text, comments, {{.Field}} chains (a missing key is an error, as
// with missingkey=error), $ and declared variables, parenthesised pipelines,
// pipes, if/else if/else, with/else, range over lists, maps (sorted keys) and
// ints with break/continue, and the builtins and, or, not, eq, ne, lt, le, gt,
// ge, len, index, print, printf, println, html, js, urlquery. Anything else
// (define, template, block, method calls) is refused when parsed, naming it.
package prompt

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
)

// Template is a parsed prompt.
type Template struct {
	name string
	tree *parse.Tree
}

// builtins are the functions a prompt may call (the parser only needs their
// names, with non-nil values; call runs them).
var builtins = map[string]any{
	"and": true, "or": true, "not": true, "eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"len": true, "index": true, "print": true, "printf": true, "println": true, "html": true, "js": true, "urlquery": true,
}

// Parse parses text as a prompt template named name.
func Parse(name, text string) (*Template, error) {
	trees, err := parse.Parse(name, text, "", "", builtins)
	if err != nil {
		return nil, err
	}
	if len(trees) != 1 {
		return nil, errors.New("define and block are not supported in prompts")
	}
	t := &Template{name: name, tree: trees[name]}
	if t.tree == nil || t.tree.Root == nil {
		return nil, errors.New("no template") // parse always yields one; kept for safety
	}
	if err := check(t.tree.Root); err != nil {
		return nil, err
	}
	return t, nil
}

// check refuses the nodes the evaluator does not run.
func check(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := check(c); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		return fmt.Errorf("{{template %q}} is not supported in prompts", n.Name)
	case *parse.IfNode:
		return errors.Join(check(n.List), check(n.ElseList))
	case *parse.RangeNode:
		return errors.Join(check(n.List), check(n.ElseList))
	case *parse.WithNode:
		return errors.Join(check(n.List), check(n.ElseList))
	}
	return nil
}

// Execute writes the prompt for data (usually a map[string]any) to w.
func (t *Template) Execute(w io.Writer, data any) error {
	s := &state{w: w, vars: []variable{{"$", data}}}
	err := s.walk(data, t.tree.Root)
	if errors.Is(err, errBreak) || errors.Is(err, errContinue) {
		err = errors.New("break or continue outside range")
	}
	if err != nil {
		return fmt.Errorf("template: %s: %w", t.name, err)
	}
	return nil
}

type variable struct {
	name  string
	value any
}

type state struct {
	w    io.Writer
	vars []variable
}

var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

func (s *state) walk(dot any, n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := s.walk(dot, c); err != nil {
				return err
			}
		}
	case *parse.TextNode:
		_, err := s.w.Write(n.Text)
		return err
	case *parse.CommentNode:
	case *parse.ActionNode:
		v, err := s.pipe(dot, n.Pipe)
		if err != nil {
			return err
		}
		if len(n.Pipe.Decl) == 0 {
			return printValue(s.w, v)
		}
	case *parse.IfNode:
		return s.cond(dot, &n.BranchNode, false)
	case *parse.WithNode:
		return s.cond(dot, &n.BranchNode, true)
	case *parse.RangeNode:
		return s.rangeOver(dot, n)
	case *parse.BreakNode:
		return errBreak
	case *parse.ContinueNode:
		return errContinue
	default:
		return fmt.Errorf("%s is not supported in prompts", n)
	}
	return nil
}

func (s *state) cond(dot any, b *parse.BranchNode, with bool) error {
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	v, err := s.pipe(dot, b.Pipe)
	if err != nil {
		return err
	}
	if truth(v) {
		if with {
			dot = v
		}
		return s.walk(dot, b.List)
	}
	return s.walk(dot, b.ElseList)
}

func (s *state) rangeOver(dot any, r *parse.RangeNode) error {
	mark := len(s.vars)
	defer func() { s.vars = s.vars[:mark] }()
	v, err := s.pipeValue(dot, r.Pipe)
	if err != nil {
		return err
	}
	one := func(k, e any) error {
		switch len(r.Pipe.Decl) {
		case 1:
			s.vars[len(s.vars)-1].value = e
		case 2:
			s.vars[len(s.vars)-2].value = k
			s.vars[len(s.vars)-1].value = e
		}
		err := s.walk(e, r.List)
		if errors.Is(err, errContinue) {
			return nil
		}
		return err
	}
	for _, d := range r.Pipe.Decl {
		s.vars = append(s.vars, variable{d.Ident[0], nil})
	}
	n := 0
	switch v := v.(type) {
	case []any:
		for i, e := range v {
			if err := one(i, e); err != nil {
				return breakOK(err)
			}
		}
		n = len(v)
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := one(k, v[k]); err != nil {
				return breakOK(err)
			}
		}
		n = len(v)
	case int:
		for i := range v {
			if err := one(i, i); err != nil {
				return breakOK(err)
			}
		}
		n = v
	case nil:
	default:
		return fmt.Errorf("range can't iterate over %v", v)
	}
	if n == 0 {
		return s.walk(dot, r.ElseList)
	}
	return nil
}

func breakOK(err error) error {
	if errors.Is(err, errBreak) {
		return nil
	}
	return err
}

// pipe evaluates a pipeline and declares or assigns its variables.
func (s *state) pipe(dot any, p *parse.PipeNode) (any, error) {
	v, err := s.pipeValue(dot, p)
	if err != nil {
		return nil, err
	}
	for _, d := range p.Decl {
		if p.IsAssign {
			if err := s.set(d.Ident[0], v); err != nil {
				return nil, err
			}
		} else {
			s.vars = append(s.vars, variable{d.Ident[0], v})
		}
	}
	return v, nil
}

func (s *state) pipeValue(dot any, p *parse.PipeNode) (any, error) {
	if p == nil {
		return nil, errors.New("missing pipeline")
	}
	var v any
	for i, c := range p.Cmds {
		var final *any
		if i > 0 {
			final = &v
		}
		var err error
		if v, err = s.command(dot, c, final); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (s *state) command(dot any, c *parse.CommandNode, final *any) (any, error) {
	first := c.Args[0]
	if id, ok := first.(*parse.IdentifierNode); ok {
		args := make([]any, 0, len(c.Args))
		if id.Ident == "and" || id.Ident == "or" {
			return s.andOr(dot, id.Ident, c.Args[1:], final)
		}
		for _, a := range c.Args[1:] {
			v, err := s.arg(dot, a)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		if final != nil {
			args = append(args, *final)
		}
		return call(id.Ident, args)
	}
	if len(c.Args) > 1 || final != nil {
		return nil, fmt.Errorf("can't give arguments to %s: it is not a function", first)
	}
	return s.arg(dot, first)
}

// andOr evaluates its arguments only as far as needed, like text/template.
func (s *state) andOr(dot any, name string, nodes []parse.Node, final *any) (any, error) {
	if len(nodes) == 0 && final == nil {
		return nil, fmt.Errorf("%s takes at least one argument", name)
	}
	var v any
	n := len(nodes)
	if final != nil {
		n++
	}
	for i := range n {
		if i < len(nodes) {
			var err error
			if v, err = s.arg(dot, nodes[i]); err != nil {
				return nil, err
			}
		} else {
			v = *final
		}
		if truth(v) == (name == "or") {
			return v, nil
		}
	}
	return v, nil
}

func (s *state) arg(dot any, n parse.Node) (any, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.NilNode:
		return nil, errors.New("nil is not a command")
	case *parse.StringNode:
		return n.Text, nil
	case *parse.BoolNode:
		return n.True, nil
	case *parse.NumberNode:
		switch {
		case n.IsInt:
			return int(n.Int64), nil
		case n.IsFloat:
			return n.Float64, nil
		}
		return nil, fmt.Errorf("number %s is not supported in prompts", n.Text)
	case *parse.FieldNode:
		return fields(dot, n.Ident)
	case *parse.VariableNode:
		v, err := s.get(n.Ident[0])
		if err != nil {
			return nil, err
		}
		return fields(v, n.Ident[1:])
	case *parse.ChainNode:
		v, err := s.arg(dot, n.Node)
		if err != nil {
			return nil, err
		}
		return fields(v, n.Field)
	case *parse.PipeNode:
		mark := len(s.vars)
		defer func() { s.vars = s.vars[:mark] }()
		return s.pipe(dot, n)
	case *parse.IdentifierNode:
		return call(n.Ident, nil)
	}
	return nil, fmt.Errorf("%s is not supported in prompts", n)
}

func (s *state) get(name string) (any, error) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			return s.vars[i].value, nil
		}
	}
	return nil, fmt.Errorf("undefined variable %s", name)
}

func (s *state) set(name string, v any) error {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if s.vars[i].name == name {
			s.vars[i].value = v
			return nil
		}
	}
	return fmt.Errorf("undefined variable %s", name)
}

// fields follows a chain of map keys; a missing key is an error.
func fields(v any, chain []string) (any, error) {
	for _, name := range chain {
		switch m := v.(type) {
		case map[string]any:
			e, ok := m[name]
			if !ok {
				return nil, fmt.Errorf("map has no entry for key %q", name)
			}
			v = e
		case nil:
			return nil, fmt.Errorf("nil pointer evaluating .%s", name)
		default:
			return nil, fmt.Errorf("can't evaluate field %s in type %T", name, v)
		}
	}
	return v, nil
}

// truth is text/template's notion of true: not the zero value, not empty.
func truth(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return v != ""
	case int:
		return v != 0
	case float64:
		return v != 0
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

func call(name string, args []any) (any, error) {
	want := func(n int) error {
		if len(args) != n {
			return fmt.Errorf("wrong number of args for %s: want %d got %d", name, n, len(args))
		}
		return nil
	}
	switch name {
	case "not":
		if err := want(1); err != nil {
			return nil, err
		}
		return !truth(args[0]), nil
	case "eq":
		if len(args) < 2 {
			return nil, errors.New("missing argument for comparison")
		}
		for _, b := range args[1:] {
			c, err := compare(args[0], b)
			if err != nil {
				return nil, fmt.Errorf("error calling eq: %w", err)
			}
			if c == 0 {
				return true, nil
			}
		}
		return false, nil
	case "ne", "lt", "le", "gt", "ge":
		if err := want(2); err != nil {
			return nil, err
		}
		c, err := compare(args[0], args[1])
		if err != nil {
			return nil, fmt.Errorf("error calling %s: %w", name, err)
		}
		if c == 2 && name != "ne" {
			return nil, fmt.Errorf("error calling %s: invalid type for comparison", name)
		}
		return map[string]bool{"ne": c != 0, "lt": c < 0, "le": c <= 0, "gt": c == 1, "ge": c == 0 || c == 1}[name], nil
	case "len":
		if err := want(1); err != nil {
			return nil, err
		}
		switch v := args[0].(type) {
		case string:
			return len(v), nil
		case []any:
			return len(v), nil
		case map[string]any:
			return len(v), nil
		}
		return nil, fmt.Errorf("error calling len: len of type %T", args[0])
	case "index":
		if len(args) == 0 {
			return nil, errors.New("wrong number of args for index")
		}
		v := args[0]
		for _, k := range args[1:] {
			switch c := v.(type) {
			case map[string]any:
				ks, ok := k.(string)
				if !ok {
					return nil, fmt.Errorf("error calling index: cannot index a map with %T", k)
				}
				v = c[ks]
			case []any:
				i, ok := k.(int)
				if !ok || i < 0 || i >= len(c) {
					return nil, fmt.Errorf("error calling index: index out of range: %v", k)
				}
				v = c[i]
			default:
				return nil, fmt.Errorf("error calling index: can't index item of type %T", v)
			}
		}
		return v, nil
	case "print":
		return fmt.Sprint(args...), nil
	case "println":
		return fmt.Sprintln(args...), nil
	case "printf":
		if len(args) == 0 {
			return nil, errors.New("wrong number of args for printf")
		}
		f, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("printf format is %T, not a string", args[0])
		}
		return fmt.Sprintf(f, args[1:]...), nil
	case "html":
		return template.HTMLEscaper(args...), nil
	case "js":
		return template.JSEscaper(args...), nil
	case "urlquery":
		return template.URLQueryEscaper(args...), nil
	}
	return nil, fmt.Errorf("function %q not defined", name)
}

// compare orders a and b: -1, 0, 1, or 2 for unequal but unordered (bools).
// Numbers compare across int and float64: JSON numbers are float64, and
// {{if eq .JSON.n 3}} should work (text/template refuses int against float).
func compare(a, b any) (int, error) {
	num := func(v any) (float64, bool) {
		switch v := v.(type) {
		case int:
			return float64(v), true
		case float64:
			return v, true
		}
		return 0, false
	}
	if x, ok := num(a); ok {
		if y, ok := num(b); ok {
			switch {
			case x < y:
				return -1, nil
			case x > y:
				return 1, nil
			}
			return 0, nil
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			if x == y {
				return 0, nil
			}
			return 2, nil
		}
	case nil:
		if b == nil {
			return 0, nil
		}
	}
	return 0, fmt.Errorf("incompatible types for comparison: %T and %T", a, b)
}

// printValue prints like text/template: fmt's default format, <no value> for nil.
func printValue(w io.Writer, v any) error {
	if v == nil {
		_, err := io.WriteString(w, "<no value>")
		return err
	}
	_, err := fmt.Fprint(w, v)
	return err
}
