// Package corpus generates the deterministic sample corpus of make demo and the
// pipeline tests: support tickets as .txt, .md, .json and .jsonl documents, plus a
// few documents a run must skip (oversized, not UTF-8, invalid JSON, a JSON ticket
// the prompt template cannot render, an unsupported type).
package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Topics are the categories the sample tickets are written about.
var Topics = []string{"billing", "outage", "feature", "account"}

var phrases = map[string][]string{
	"billing": {"I was charged twice for the billing period", "the invoice shows the wrong billing address", "please refund the billing error"},
	"outage":  {"the dashboard is down since this morning, a full outage", "API calls time out during the outage", "the outage stopped our nightly export"},
	"feature": {"could you add a dark mode feature", "a feature to export reports as CSV would help", "we would love a feature for SSO groups"},
	"account": {"I cannot log in to my account", "please merge my two account profiles", "the account owner left the company"},
	"":        {"thanks for the quick help last week", "just a general question about your roadmap", "how do I reach a human"},
}

// Spec says how many good documents of each kind to write.
type Spec struct {
	Text, Markdown, JSON, JSONLFiles, LinesPerJSONL int
	// Bad adds the documents a run must skip.
	Bad bool
}

// Demo is make demo's corpus: 40 .txt, 30 .md, 30 .json and 5 .jsonl files of 5
// tickets each (125 usable documents) and 5 bad ones.
var Demo = Spec{Text: 40, Markdown: 30, JSON: 30, JSONLFiles: 5, LinesPerJSONL: 5, Bad: true}

// ticket is the n-th generated ticket: its topic cycles, its words vary.
func ticket(n int) (topic, subject, body string) {
	all := append(append([]string{}, Topics...), "")
	topic = all[n%len(all)]
	p := phrases[topic]
	body = fmt.Sprintf("Ticket %d. %s. Customer %d wrote on day %d: %s.", n, p[n%len(p)], 1000+n*7%97, n%28+1, p[(n+1)%len(p)])
	subject = fmt.Sprintf("Ticket %d", n)
	if topic == "" {
		topic = "other"
	}
	return topic, subject, body
}

// Generate writes the corpus into dir and returns how many usable documents it holds
// and the topic of each (by document key) so tests can check the report's numbers.
func Generate(dir string, s Spec) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	want := map[string]string{}
	n := 0
	write := func(name string, data []byte) error {
		return os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	for i := 0; i < s.Text; i++ {
		topic, subj, body := ticket(n)
		name := fmt.Sprintf("ticket-%03d.txt", n)
		if err := write(name, []byte(subj+"\n\n"+body+"\n")); err != nil {
			return nil, err
		}
		want[name] = topic
		n++
	}
	for i := 0; i < s.Markdown; i++ {
		topic, subj, body := ticket(n)
		name := fmt.Sprintf("ticket-%03d.md", n)
		if err := write(name, []byte("# "+subj+"\n\n- from: customer\n\n"+body+"\n")); err != nil {
			return nil, err
		}
		want[name] = topic
		n++
	}
	for i := 0; i < s.JSON; i++ {
		topic, subj, body := ticket(n)
		name := fmt.Sprintf("ticket-%03d.json", n)
		b, _ := json.Marshal(map[string]any{"subject": subj, "body": body, "priority": n % 3})
		if err := write(name, b); err != nil {
			return nil, err
		}
		want[name] = topic
		n++
	}
	for f := 0; f < s.JSONLFiles; f++ {
		var lines []string
		name := fmt.Sprintf("batch-%02d.jsonl", f)
		for l := 1; l <= s.LinesPerJSONL; l++ {
			topic, subj, body := ticket(n)
			b, _ := json.Marshal(map[string]any{"subject": subj, "body": body})
			lines = append(lines, string(b))
			want[fmt.Sprintf("%s#%d", name, l)] = topic
			n++
		}
		if err := write(name, []byte(strings.Join(lines, "\n")+"\n")); err != nil {
			return nil, err
		}
	}
	if s.Bad {
		bad := map[string][]byte{
			"zz-oversized.txt":       []byte(strings.Repeat("an outage report that goes on and on. ", 8000)), // ~300 KB
			"zz-not-utf8.txt":        {0xff, 0xfe, 0x00, 0x41, 0x80, 0x81},
			"zz-broken.json":         []byte(`{"subject": "half a ticket", "body": `),
			"zz-no-subject.json":     []byte(`{"body": "a ticket the template cannot render: it has no subject"}`),
			"zz-scanned-invoice.pdf": []byte("%PDF-1.4 not a text document"),
		}
		for name, data := range bad {
			if err := write(name, data); err != nil {
				return nil, err
			}
		}
	}
	return want, nil
}
