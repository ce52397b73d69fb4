package sim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SimulatedAnswer is the text both Bedrock simulators (batch and runtime) answer a
// prompt with, so a job gives the same results whichever way it ran. When the
// system prompt asks for JSON and lists "categories: a|b|c", the simulator acts as a
// keyword classifier: the first listed category named in the prompt wins, else the
// last one. It is a test double and says so in every answer.
func SimulatedAnswer(system, prompt, recordID string) string {
	if cats, ok := AskedCategories(system); ok {
		low := strings.ToLower(prompt)
		pick := cats[len(cats)-1]
		for _, c := range cats {
			if strings.Contains(low, strings.ToLower(c)) {
				pick = c
				break
			}
		}
		conf := 0.55
		if pick != cats[len(cats)-1] {
			conf = 0.9
		}
		out, _ := json.Marshal(map[string]any{
			"category":   pick,
			"confidence": conf,
			"summary":    "[simulated] " + firstWords(prompt, 12),
		})
		return string(out)
	}
	p := prompt
	if len(p) > 60 {
		p = strings.ToValidUTF8(p[:60], "") + "..."
	}
	return fmt.Sprintf("[simulated] reply to record %s: %q", recordID, p)
}

// AskedCategories finds a "categories: a|b|c" line in a system prompt that asks for JSON.
func AskedCategories(system string) ([]string, bool) {
	if !strings.Contains(strings.ToLower(system), "json") {
		return nil, false
	}
	for _, line := range strings.Split(system, "\n") {
		rest, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(line)), "categories:")
		if !ok {
			continue
		}
		var cats []string
		for _, c := range strings.Split(rest, "|") {
			if c = strings.TrimSpace(c); c != "" {
				cats = append(cats, c)
			}
		}
		if len(cats) > 0 {
			return cats, true
		}
	}
	return nil, false
}

// firstWords skips template boilerplate lines and returns the start of the document text.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[len(f)-n:]
	}
	return strings.Join(f, " ")
}
