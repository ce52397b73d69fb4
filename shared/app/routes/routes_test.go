package routes

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// Events takes one handler per function of the table, no fewer and no more,
// and keys each of the function's detail types to it.
func TestEvents(t *testing.T) {
	all := func() map[string]Handler {
		m := map[string]Handler{}
		for _, r := range Table {
			fn := r.Function
			m[fn] = func(context.Context, events.CloudWatchEvent) error { return &ranErr{fn} }
		}
		return m
	}
	ev, err := Events(all())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Table {
		for _, dt := range r.DetailTypes {
			h, ok := ev[Key(r.Source, dt)]
			if !ok {
				t.Fatalf("%s|%s is not routed", r.Source, dt)
			}
			if err := h(context.Background(), events.CloudWatchEvent{}); err.(*ranErr).fn != r.Function {
				t.Errorf("%s|%s runs %s, want %s", r.Source, dt, err.(*ranErr).fn, r.Function)
			}
			if got := FunctionFor(r.Source, dt); got != r.Function {
				t.Errorf("FunctionFor(%s, %s) = %s, want %s", r.Source, dt, got, r.Function)
			}
		}
	}
	missing := all()
	delete(missing, FnIngest)
	if _, err := Events(missing); err == nil || !strings.Contains(err.Error(), FnIngest) {
		t.Errorf("no ingest handler: err = %v, want one naming %s", err, FnIngest)
	}
	extra := all()
	extra["mcp"] = extra[FnIngest]
	if _, err := Events(extra); err == nil || !strings.Contains(err.Error(), "mcp") {
		t.Errorf("a handler for mcp: err = %v, want one naming mcp", err)
	}
}

type ranErr struct{ fn string }

func (e *ranErr) Error() string { return e.fn }
