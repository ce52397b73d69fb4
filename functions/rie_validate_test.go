//go:build linux

package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/job"
	"github.com/mcpbatch/mcpbatch/shared/provider/bedrock/bedrockbatch"
	"github.com/mcpbatch/mcpbatch/shared/service"
	"github.com/mcpbatch/mcpbatch/shared/service/batch"
	"github.com/mcpbatch/mcpbatch/shared/service/graph"
	"github.com/mcpbatch/mcpbatch/shared/service/transfer"
)

// published keeps what a submit put on the bus (here nothing delivers it).
type published struct {
	mu     sync.Mutex
	events []map[string]any
}

func (p *published) Publish(_ context.Context, detailType string, detail any) error {
	raw, _ := json.Marshal(detail)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, map[string]any{"version": "0", "id": fmt.Sprint(len(p.events)), "source": config.EventSource,
		"detail-type": detailType, "account": "123456789012", "region": region, "detail": json.RawMessage(raw)})
	return nil
}

// TestValidateUnderRIE: a file submit as the mcp function makes it (the same
// library, against moto) answers validating and asks for validation; the
// built validate bootstrap, given that event, fails the job with the problem
// list. Unknown jobs and malformed events are acknowledged.
func TestValidateUnderRIE(t *testing.T) {
	st := newStack(t)
	fn := startLambda(t, "validate", st)
	acknowledged(t, fn.invoke(t, readFile(t, "../events/project/input-validation-requested.json")))
	acknowledged(t, fn.invoke(t, []byte(`{"source":"mcpbatch","detail-type":"Input Validation Requested","detail":{}}`)))

	var b strings.Builder
	for i := range 150 {
		id := fmt.Sprintf("q%d", i)
		if i == 89 {
			id = "q4"
		}
		fmt.Fprintf(&b, `{"id":%q,"prompt":"p%d"}`+"\n", id, i)
	}
	key := "inputs/" + service.OwnerTag("alice") + "/dup.jsonl"
	if _, err := st.s3.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(key), Body: strings.NewReader(b.String())}); err != nil {
		t.Fatal(err)
	}
	bus := &published{}
	d := graph.Deps{Store: st.store, Blobs: s3blob.New(st.s3, s3blob.Options{}), Bus: bus, Log: slog.New(slog.DiscardHandler),
		Bucket: "s3://" + st.bucket, JobPrefix: jobPrefix,
		Providers: []service.BatchProvider{&bedrockbatch.Provider{ModelIDs: config.DefaultBedrockModels}}}
	if err := app.Catalog(&d, region); err != nil {
		t.Fatal(err)
	}
	j, err := graph.New(d).Transfer.SubmitFile(t.Context(), transfer.FileSubmitRequest{
		SubmitRequest: batch.SubmitRequest{Owner: "alice", Model: "anthropic.claude-haiku-4-5-20251001-v1:0"},
		InputURI:      "s3://" + st.bucket + "/" + key,
	})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != job.StatusValidating || len(bus.events) != 1 || bus.events[0]["detail-type"] != config.DetailInputValidation {
		t.Fatalf("submit left status %s and events %v", j.Status, bus.events)
	}
	ev, _ := json.Marshal(bus.events[0])
	acknowledged(t, fn.invoke(t, ev))
	got, err := st.store.GetJob(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusFailed || !strings.Contains(got.Error, `1 of 150 lines are invalid`) ||
		!strings.Contains(got.Error, `line 90: duplicate id "q4" (also line 5)`) || len(got.Parts) != 0 {
		t.Errorf("job after validation: status %s, %d parts, error %q", got.Status, len(got.Parts), got.Error)
	}
}
