package auth_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpbatch/mcpbatch/shared/app/auth"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
	"github.com/mcpbatch/mcpbatch/shared/motoserver"
)

var moto *motoserver.Server

func TestMain(m *testing.M) { os.Exit(motoserver.Main(m, &moto)) }

// The key store, read by the real SDK clients over HTTP from moto_server.
func TestKeySources(t *testing.T) {
	ctx := context.Background()
	cfg := moto.Config()
	cfg.BaseEndpoint = aws.String(moto.Endpoint)
	sm := secretsmanager.NewFromConfig(cfg)
	key := mcpserver.NewToken()
	doc := `{"keys":[{"name":"alice","sha256":"` + mcpserver.HashToken(key) + `"}]}`
	if _, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("mcpbatch-keys"), SecretString: aws.String(doc)}); err != nil {
		t.Fatal(err)
	}
	if _, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("mcpbatch-bad"), SecretString: aws.String(`{"keys":[{"name":"alice","sha256":"` + key + `"}]}`)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		src     mcpserver.KeySource
		wantErr string
	}{
		{"secrets manager", auth.SecretKeys(sm, "mcpbatch-keys"), ""},
		{"missing secret", auth.SecretKeys(sm, "nope"), "get secret nope"},
		{"plain key stored instead of its hash", auth.SecretKeys(sm, "mcpbatch-bad"), "64 hex"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ta := &mcpserver.TokenAuth{Load: tc.src}
			r := httptest.NewRequest("POST", "/mcp", nil)
			r.Header.Set("Authorization", "Bearer "+key)
			owner, err := ta.Owner(r)
			if tc.wantErr != "" {
				if !errors.Is(err, mcpserver.ErrAuthUnavailable) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want ErrAuthUnavailable mentioning %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), key) {
					t.Errorf("error leaks the key: %v", err)
				}
				return
			}
			if err != nil || owner != "alice" {
				t.Fatalf("owner %q err %v", owner, err)
			}
		})
	}
}
