package bedrock_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock"
)

// Every output shape that carries usage reads it the same way, each in its
// own spelling: a Converse job's answer, Nova's native answer (the Converse
// shape in an InvokeModel job) and Claude's native Messages answer.
func TestUsage(t *testing.T) {
	// members are the shape's names for input, output, cache read, cache write.
	type shape struct {
		name    string
		parse   func([]byte) (job.Record, error)
		line    string // %s: the usage value
		members [4]string
	}
	converse := [4]string{"inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"}
	claude := [4]string{"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"}
	converseLine := `{"recordId":"u1","modelOutput":{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"end_turn","usage":%s}}`
	shapes := []shape{
		{"converse", bedrock.ParseConverseLine, converseLine, converse},
		{"nova native", bedrock.ParseOutputLine, converseLine, converse},
		{"claude native", bedrock.ParseOutputLine, `{"recordId":"u1","modelOutput":{"type":"message","content":[{"type":"text","text":"x"}],"stop_reason":"end_turn","usage":%s}}`, claude},
	}
	other := func(s shape) [4]string {
		if s.members == claude {
			return converse
		}
		return claude
	}
	cases := []struct {
		name  string
		usage func(s shape) string
		want  [4]int64 // input, output, cache read, cache write
		errOn int      // the member (1..4, as in want) the error names; 0: no error
	}{
		{"every count", func(s shape) string {
			m := s.members
			return fmt.Sprintf(`{%q:11,%q:7,%q:5,%q:3}`, m[0], m[1], m[2], m[3])
		}, [4]int64{11, 7, 5, 3}, 0},
		{"members it does not name are skipped", func(s shape) string {
			return fmt.Sprintf(`{"totalTokens":18,%q:11,"server_tool_use":{"web_search_requests":1},%q:7}`, s.members[0], s.members[1])
		}, [4]int64{11, 7, 0, 0}, 0},
		{"null usage", func(shape) string { return `null` }, [4]int64{}, 0},
		{"null counts", func(s shape) string {
			return fmt.Sprintf(`{%q:11,%q:7,%q:null,%q:null}`, s.members[0], s.members[1], s.members[2], s.members[3])
		}, [4]int64{11, 7, 0, 0}, 0},
		{"the other shape's names are not read", func(s shape) string {
			m := other(s)
			return fmt.Sprintf(`{%q:11,%q:7,%q:5,%q:3}`, m[0], m[1], m[2], m[3])
		}, [4]int64{}, 0},
		{"a count of the wrong type", func(s shape) string {
			return fmt.Sprintf(`{%q:"11"}`, s.members[0])
		}, [4]int64{}, 1},
		{"a count that is no integer", func(s shape) string {
			return fmt.Sprintf(`{%q:1,%q:2.5}`, s.members[0], s.members[3])
		}, [4]int64{}, 4},
	}
	for _, s := range shapes {
		for _, c := range cases {
			t.Run(s.name+"/"+c.name, func(t *testing.T) {
				rec, err := s.parse(fmt.Appendf(nil, s.line, c.usage(s)))
				if c.errOn > 0 {
					member := "usage." + s.members[c.errOn-1]
					if err == nil || !strings.Contains(err.Error(), member) {
						t.Fatalf("err = %v, want one naming %s", err, member)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				got := [4]int64{rec.InputTokens, rec.OutputTokens, rec.CacheReadTokens, rec.CacheWriteTokens}
				if got != c.want || rec.Output != "x" {
					t.Fatalf("counts = %v, output %q; want %v, \"x\"", got, rec.Output, c.want)
				}
			})
		}
	}
}
