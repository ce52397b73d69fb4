package prompt

import (
	"encoding/json"
	"strings"
	"testing"
	"text/template"
)

// doc is a JSON document the way the pipeline hands one to a template.
func doc(t *testing.T, kind, raw string) map[string]any {
	t.Helper()
	var js any
	if kind == "json" {
		if err := json.Unmarshal([]byte(raw), &js); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]any{"Key": "in/a." + kind, "Name": "a." + kind, "Kind": kind, "Text": raw, "JSON": js, "Pipeline": "p", "Date": "2026-12-01"}
}

// TestSameAsTextTemplate runs each prompt through this package and through
// text/template (missingkey=error) and wants the same output, or both failing.
func TestSameAsTextTemplate(t *testing.T) {
	jsonDoc := `{"subject":"Refund","body":"Where is my <refund>?","tags":["a","b"],"n":3,"nested":{"x":true},"empty":[]}`
	for _, c := range []struct {
		name, tmpl, kind, raw string
		wantErr               bool
	}{
		{"shipped ticket prompt json", "Ticket {{.Key}}\n\n{{if eq .Kind \"json\" \"jsonl\"}}Subject: {{.JSON.subject}}\n\n{{.JSON.body}}{{else}}{{.Text}}{{end}}", "json", jsonDoc, false},
		{"shipped ticket prompt txt", "Ticket {{.Key}}\n\n{{if eq .Kind \"json\" \"jsonl\"}}Subject: {{.JSON.subject}}\n\n{{.JSON.body}}{{else}}{{.Text}}{{end}}", "txt", "plain words", false},
		{"shipped summary prompt", "Summarise {{.Name}} in two sentences:\n\n{{.Text}}", "md", "# T\nbody", false},
		{"range with index", "{{range $i, $t := .JSON.tags}}{{$i}}={{$t}};{{end}}", "json", jsonDoc, false},
		{"range dot", "{{range .JSON.tags}}[{{.}}]{{end}}", "json", jsonDoc, false},
		{"range else", "{{range .JSON.empty}}x{{else}}none{{end}}", "json", jsonDoc, false},
		{"range map sorted", "{{range $k, $v := .JSON.nested}}{{$k}}:{{$v}}{{end}}", "json", jsonDoc, false},
		{"range break", "{{range .JSON.tags}}{{if eq . \"b\"}}{{break}}{{end}}{{.}}{{end}}", "json", jsonDoc, false},
		{"range continue", "{{range .JSON.tags}}{{if eq . \"a\"}}{{continue}}{{end}}{{.}}{{end}}", "json", jsonDoc, false},
		{"with", "{{with .JSON.nested}}{{.x}}{{end}}", "json", jsonDoc, false},
		{"with else", "{{with .JSON.empty}}x{{else}}empty{{end}}", "json", jsonDoc, false},
		{"variables", "{{$s := .JSON.subject}}{{$s = printf \"%s!\" $s}}{{$s}} {{$.Name}}", "json", jsonDoc, false},
		{"pipe and funcs", "{{.JSON.body | html}} {{.JSON.body | js}} {{urlquery .JSON.subject \"a b\"}} {{len .JSON.tags}} {{index .JSON.tags 1}} {{index .JSON \"subject\"}}", "json", jsonDoc, false},
		{"print funcs", "{{print .JSON.n \"x\"}}|{{println .Name}}|{{printf \"%.1f\" .JSON.n}}", "json", jsonDoc, false},
		{"logic", "{{if and .JSON.nested.x (not .JSON.empty)}}yes{{end}}{{or .JSON.empty \"dflt\"}}{{and \"\" .Missing}}", "json", jsonDoc, false},
		{"compare strings", "{{if lt .Kind \"zzz\"}}lt{{end}}{{if ne .Kind \"txt\"}}ne{{end}}{{if ge .Name \"a\"}}ge{{end}}", "json", jsonDoc, false},
		{"parenthesised", "{{(index .JSON.tags 0)}}{{len (index .JSON \"tags\")}}", "json", jsonDoc, false},
		{"chain", "{{(.JSON).nested.x}}", "json", jsonDoc, false},
		{"comment and trim", "a {{- /* note */ -}} b", "txt", "", false},
		{"whole map", "{{.JSON.nested}}", "json", jsonDoc, false},
		{"nil prints no value", "{{.JSON}}", "txt", "x", false},
		{"missing key", "{{.JSON.nope}}", "json", jsonDoc, true},
		{"field of nil", "{{.JSON.subject}}", "txt", "x", true},
		{"missing top field", "{{.Nope}}", "txt", "x", true},
		{"eq incompatible", "{{if eq .Kind 1}}x{{end}}", "txt", "x", true},
		{"index out of range", "{{index .JSON.tags 5}}", "json", jsonDoc, true},
		{"len of number", "{{len .JSON.n}}", "json", jsonDoc, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := doc(t, c.kind, c.raw)
			want, wantErr := viaTextTemplate(c.tmpl, data)
			p, err := Parse("p", c.tmpl)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var got strings.Builder
			err = p.Execute(&got, data)
			if (err != nil) != c.wantErr || (wantErr != nil) != c.wantErr {
				t.Fatalf("err %v, text/template err %v; want an error: %v", err, wantErr, c.wantErr)
			}
			if err == nil && got.String() != want {
				t.Errorf("got %q, text/template gives %q", got.String(), want)
			}
		})
	}
}

func viaTextTemplate(text string, data any) (string, error) {
	tt, err := template.New("p").Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = tt.Execute(&b, data)
	return b.String(), err
}

// TestNumbersCompareAcrossKinds: JSON numbers are float64; a prompt may compare
// one with an integer constant (text/template refuses this).
func TestNumbersCompareAcrossKinds(t *testing.T) {
	p, err := Parse("p", `{{if eq .n 3}}three{{end}}{{if gt .n 2.5}} big{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.Execute(&b, map[string]any{"n": 3.0}); err != nil || b.String() != "three big" {
		t.Fatalf("got %q, %v", b.String(), err)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ tmpl, want string }{
		{`{{define "x"}}a{{end}}{{template "x"}}`, "not supported"},
		{`{{template "y"}}`, "not supported"},
		{`{{call .F}}`, `function "call" not defined`},
		{`{{.Name`, "unclosed action"},
	} {
		_, err := Parse("p", c.tmpl)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", c.tmpl, err, c.want)
		}
	}
}
