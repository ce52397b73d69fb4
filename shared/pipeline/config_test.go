package pipeline

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpbatch/mcpbatch/shared/job"
)

func shipped(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../infra/pipelines/pipelines.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseShipped(t *testing.T) {
	c, err := Parse(strings.NewReader(shipped(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckTemplates(); err != nil {
		t.Fatal(err)
	}
	p, _ := c.Find("support-triage")
	sys := p.SystemPrompt()
	for _, want := range []string{"Answer with one JSON object only", "- category (string)", "categories: billing|outage|feature|account|other"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, from, to, field string
	}{
		{"bad name", `"support-triage"`, `"Support Triage"`, "pipelines[0].name"},
		{"bad schedule", `"cron(0 2 * * ? *)"`, `"every night"`, "pipelines[0].schedule"},
		{"bad zone", `"Europe/Berlin"`, `"Europe/Atlantis"`, "pipelines[0].time_zone"},
		{"not s3", `"s3://{bucket}/sources/support-triage/{date}/"`, `"/tmp/x"`, "pipelines[0].source.s3_prefix"},
		{"provider", `"provider": "bedrock"`, `"provider": "openai"`, "pipelines[0].provider"},
		{"mode", `"mode": "auto"`, `"mode": "fast"`, "pipelines[0].mode"},
		{"kind", `"kind": "json"`, `"kind": "xml"`, "pipelines[0].output.kind"},
		{"field type", `"confidence": "number"`, `"confidence": "float"`, "pipelines[0].output.fields.confidence"},
		{"category field", `"category_field": "category"`, `"category_field": "topic"`, "pipelines[0].output.category_field"},
		{"ttl", `"ttl_days": 30`, `"ttl_days": 999`, "pipelines[0].ttl_days"},
		{"max tokens", `"max_tokens": 300`, `"max_tokens": 100000`, "pipelines[0].max_tokens"},
		{"duplicate", `"release-notes-digest"`, `"support-triage"`, "pipelines[1].name"},
		{"topic arn", `"recipients": {}`, `"recipients": {"sns_topic_arn": "my-topic"}`, "pipelines[0].recipients.sns_topic_arn"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := shipped(t)
			if !strings.Contains(src, tc.from) {
				t.Fatalf("shipped file lacks %q", tc.from)
			}
			_, err := Parse(strings.NewReader(strings.Replace(src, tc.from, tc.to, 1)))
			var fe *job.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("got %v, want a field error on %s", err, tc.field)
			}
		})
	}
	t.Run("unknown key", func(t *testing.T) {
		_, err := Parse(strings.NewReader(strings.Replace(shipped(t), `"title"`, `"titel"`, 1)))
		if err == nil || !strings.Contains(err.Error(), `unknown field "titel"`) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("broken template", func(t *testing.T) {
		c, err := Parse(strings.NewReader(strings.Replace(shipped(t), `{{.Key}}`, `{{.Key`, 1)))
		if err != nil {
			t.Fatal(err)
		}
		var fe *job.FieldError
		if err := c.CheckTemplates(); !errors.As(err, &fe) || fe.Field != "pipelines[0].prompt" {
			t.Fatalf("got %v, want a field error on pipelines[0].prompt", err)
		}
	})
}

func TestRecordIDStable(t *testing.T) {
	a, b := RecordID("tickets/a.txt"), RecordID("tickets/a.txt")
	if a != b || a == RecordID("tickets/b.txt") || !job.ValidRecordID(a) {
		t.Fatalf("RecordID: %q %q", a, b)
	}
}

func TestTickDay(t *testing.T) {
	ny := &Pipeline{TimeZone: "America/New_York"}
	loc, err := time.LoadLocation(ny.TimeZone)
	if err != nil {
		t.Skip("no tz database:", err)
	}
	ny.loc = loc
	tests := []struct {
		name    string
		req     TickRequest
		want    string
		wantErr string
	}{
		{"date wins", TickRequest{Date: "2026-01-02", ScheduledTime: "2026-11-30T02:00:00Z"}, "2026-01-02", ""},
		// 02:00 UTC is still the 29th in New York: a retry delivered later reports the scheduled day.
		{"scheduled time in the pipeline's zone", TickRequest{ScheduledTime: "2026-11-30T02:00:00Z"}, "2026-11-29", ""},
		{"neither: today", TickRequest{}, "", ""},
		{"bad scheduled time", TickRequest{ScheduledTime: "Nov 30, 2026"}, "", "scheduled_time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.req.day(ny)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("day = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A pipeline's output.schema is checked at load (naming the pipeline and
// the schema field) and carried, compacted, into its jobs' parameters.
func TestPipelineOutputSchema(t *testing.T) {
	conf := func(schema string) string {
		return `{"pipelines":[{"name":"tickets","title":"Tickets","schedule":"rate(1 day)","model":"m","source":{"s3_prefix":"s3://{bucket}/in/"},"prompt":"{{.Text}}",` +
			`"output":{"kind":"json","fields":{"category":"string"},"schema":` + schema + `}}]}`
	}
	c, err := Parse(strings.NewReader(conf(`{"type": "object", "properties": {"category": {"type": "string"}}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Pipelines[0].OutputSchema(); got != `{"type":"object","properties":{"category":{"type":"string"}}}` {
		t.Errorf("OutputSchema() = %s", got)
	}
	_, err = Parse(strings.NewReader(conf(`{"type": "strin"}`)))
	var fe *job.FieldError
	if !errors.As(err, &fe) || fe.Field != "pipelines[0].output.schema" {
		t.Errorf("a bad schema: %v, want a refusal naming pipelines[0].output.schema", err)
	}
}
