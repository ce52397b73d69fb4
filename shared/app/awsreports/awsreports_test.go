package awsreports_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/mcpbatch/mcpbatch/shared/app/awsreports"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
)

// shared is the package's one moto_server: started on first use (a start
// takes seconds), stopped by TestMain; each test makes topics of its own.
var shared struct {
	once sync.Once
	srv  *motoserver.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.srv.Stop()
	os.Exit(code)
}

func moto(t *testing.T) *motoserver.Server {
	t.Helper()
	if _, err := exec.LookPath("moto_server"); err != nil {
		t.Skip("moto_server not on PATH (make tools installs it)")
	}
	shared.once.Do(func() { shared.srv, shared.err = motoserver.Start() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

// TestSNSNotifier publishes through the real SNS client to moto_server and reads
// the message back from a subscribed queue.
func TestSNSNotifier(t *testing.T) {
	srv := moto(t)
	ctx := context.Background()
	cfg := srv.Config()
	cfg.BaseEndpoint = aws.String(srv.Endpoint)
	sc := sns.NewFromConfig(cfg)
	topic, err := sc.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("reports")})
	if err != nil {
		t.Fatal(err)
	}
	// An HTTP subscriber: moto delivers the notification to it as SNS would.
	got := make(chan []byte, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- b
	}))
	t.Cleanup(hook.Close)
	if _, err := sc.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(hook.URL)}); err != nil {
		t.Fatal(err)
	}
	n := &awsreports.SNSNotifier{Client: sc}
	if err := n.Notify(ctx, *topic.TopicArn, "Support 2026-11-27: 113 of 125 succeeded", "Report: https://example/report.html"); err != nil {
		t.Fatal(err)
	}
	var env struct{ Type, Subject, Message string }
	select {
	case b := <-got:
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a guard against a lost delivery, not a speed check
		t.Fatal("no notification delivered")
	}
	if env.Subject != "Support 2026-11-27: 113 of 125 succeeded" || !strings.Contains(env.Message, "report.html") {
		t.Fatalf("delivered %+v", env)
	}
	if err := n.Notify(ctx, "", "s", "m"); err == nil || !strings.Contains(err.Error(), "MCPBATCH_REPORT_TOPIC") {
		t.Fatalf("no topic: %v", err)
	}
}

// TestSNSOwnerAttribute: a notification carries its owner as a message
// attribute, so a subscription's filter policy {"owner": [...]} receives
// only that owner's notifications (moto_server applies the policy as SNS does).
func TestSNSOwnerAttribute(t *testing.T) {
	srv := moto(t)
	ctx := context.Background()
	cfg := srv.Config()
	cfg.BaseEndpoint = aws.String(srv.Endpoint)
	sc := sns.NewFromConfig(cfg)
	topic, err := sc.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("notifications")})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]chan []byte{"alice": make(chan []byte, 4), "bob": make(chan []byte, 4)}
	for owner, ch := range got {
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			ch <- b
		}))
		t.Cleanup(hook.Close)
		if _, err := sc.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("http"), Endpoint: aws.String(hook.URL),
			Attributes: map[string]string{"FilterPolicy": `{"owner": ["` + owner + `"]}`}}); err != nil {
			t.Fatal(err)
		}
	}
	n := &awsreports.SNSNotifier{Client: sc}
	if err := n.NotifyOwner(ctx, *topic.TopicArn, "alice", "mcpbatch job j1 completed", `{"type":"job.completed"}`); err != nil {
		t.Fatal(err)
	}
	// moto's HTTP delivery leaves the attributes out of the envelope (SNS
	// includes them), so the attribute shows by the policy that matched it.
	var env struct{ Message string }
	select {
	case b := <-got["alice"]:
		if err := json.Unmarshal(b, &env); err != nil || env.Message != `{"type":"job.completed"}` {
			t.Fatalf("alice got %s (%v)", b, err)
		}
	case <-time.After(30 * time.Second): // a guard against a lost delivery, not a speed check
		t.Fatal("alice's subscriber (filter owner alice) got nothing: no owner attribute?")
	}
	select {
	case b := <-got["bob"]:
		t.Fatalf("bob's filtered subscriber got alice's notification: %s", b)
	case <-time.After(time.Second):
	}
}
