package awsreports_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpbatch/mcpbatch/shared/app/awsreports"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
)

const week = 7 * 24 * time.Hour

// session is a Lambda role's credentials: a session that ends at expires.
type session struct{ expires time.Time }

func (s session) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "ASIAEXAMPLESESSION", SecretAccessKey: "secret", SessionToken: "token",
		CanExpire: true, Expires: s.expires}, nil
}

// linkEnd is when a presigned link stops working: its X-Amz-Date plus
// X-Amz-Expires, or the end of the session that signed it, whichever is first.
func linkEnd(t *testing.T, link string, sessionEnd time.Time) time.Time {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	signed, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date of %s: %v", link, err)
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil {
		t.Fatalf("X-Amz-Expires of %s: %v", link, err)
	}
	end := signed.Add(time.Duration(secs) * time.Second)
	if q.Get("X-Amz-Security-Token") != "" && sessionEnd.Before(end) {
		end = sessionEnd
	}
	return end
}

// TestLinkSigner: a report link works as long as the notification says.
// Signed by the role's session (2 hours left), it says so rather than 7 days;
// signed by the access key in the link signer secret, it works all 7 days.
func TestLinkSigner(t *testing.T) {
	srv, err := motoserver.Start()
	if err != nil {
		t.Skipf("moto_server: %v", err)
	}
	t.Cleanup(srv.Stop)
	cfg := srv.Config()
	cfg.BaseEndpoint = aws.String(srv.Endpoint)
	now := time.Now().UTC()
	const uri = "s3://bucket/reports/daily/2026-12-03/report.html"

	t.Run("role session", func(t *testing.T) {
		ends := now.Add(2 * time.Hour)
		c := cfg.Copy()
		c.Credentials = session{expires: ends}
		link, valid, err := awsreports.NewLinkSigner(c).SignLink(t.Context(), uri, week)
		if err != nil {
			t.Fatal(err)
		}
		said := now.Add(valid)
		if end := linkEnd(t, link, ends); end.Before(said.Add(-time.Minute)) || valid > 2*time.Hour {
			t.Errorf("the notification says the link works %s (to %s); it works to %s", valid, said.Format(time.RFC3339), end.Format(time.RFC3339))
		}
	})
	t.Run("long-lived access key", func(t *testing.T) {
		name := "mcpbatch-link-signer"
		if _, err := secretsmanager.NewFromConfig(cfg).CreateSecret(t.Context(), &secretsmanager.CreateSecretInput{Name: aws.String(name),
			SecretString: aws.String(`{"access_key_id":"AKIAEXAMPLELINKS","secret_access_key":"s3cret"}`)}); err != nil {
			t.Fatal(err)
		}
		t.Setenv(config.EnvLinkSigner, name)
		ls, err := awsreports.LinkSignerFromEnv(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		link, valid, err := ls.SignLink(t.Context(), uri, week)
		if err != nil {
			t.Fatal(err)
		}
		if valid != week || linkEnd(t, link, time.Time{}).Before(now.Add(week).Add(-time.Minute)) {
			t.Errorf("link %s valid %s, want all of %s", link, valid, week)
		}
		if !strings.Contains(link, "AKIAEXAMPLELINKS") {
			t.Errorf("link %s not signed by the secret's access key", link)
		}
	})
	t.Run("unreadable secret", func(t *testing.T) {
		t.Setenv(config.EnvLinkSigner, "no-such-secret")
		if _, err := awsreports.LinkSignerFromEnv(t.Context(), cfg); err == nil || !strings.Contains(err.Error(), "no-such-secret") {
			t.Errorf("missing secret: %v", err)
		}
	})
}
