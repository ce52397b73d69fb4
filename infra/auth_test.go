package main

import (
	"encoding/json"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// The token-mode stack, built once on first use in the shared jsii session.
var tokenStack struct {
	once sync.Once
	s    synthesized
	err  error
}

func tokenMode(t *testing.T) synthesized {
	t.Helper()
	tokenStack.once.Do(func() {
		defer func() {
			if r := recover(); r != nil {
				tokenStack.err, _ = r.(error)
				if tokenStack.err == nil {
					tokenStack.err = jsiiPanic{r}
				}
			}
		}()
		app := newApp(map[string]interface{}{CtxAssetDir: fx.assetDir, CtxAuth: config.AuthToken, CtxAlarmEmail: tokenAlarmEmail})
		settings, err := SettingsFromContext(app.Node())
		if err != nil {
			tokenStack.err = err
			return
		}
		env := awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String(testAccount), Region: jsii.String(testRegion)}}
		st, err := NewStack(app, "McpbatchToken", &StackProps{StackProps: env, Settings: settings})
		if err != nil {
			tokenStack.err = err
			return
		}
		CheckWithNag(st.Stack, false)
		tmpl := assertions.Template_FromStack(st.Stack, nil)
		tokenStack.s = synthesized{settings: settings, stack: st, tmpl: tmpl, json: *tmpl.ToJSON()}
	})
	if tokenStack.err != nil {
		t.Fatal(tokenStack.err)
	}
	return tokenStack.s
}

// tokenAlarmEmail subscribes the token-mode stack's alarm topic (TestAlarms).
const tokenAlarmEmail = "ops@example.com"

type jsiiPanic struct{ v any }

func (p jsiiPanic) Error() string { return "panic: " + flatten(p.v) }

func TestAuthSetting(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    string
		wantErr bool
	}{
		{"", config.AuthIAM, false},
		{"iam", config.AuthIAM, false},
		{"token", config.AuthToken, false},
		{"none", "", true},
		{"TOKEN", "", true},
	} {
		t.Run(tc.value, func(t *testing.T) {
			app := newApp(map[string]interface{}{CtxAuth: tc.value})
			s, err := SettingsFromContext(app.Node())
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "auth") || !strings.Contains(err.Error(), "iam, token") {
					t.Fatalf("err %v, want one naming auth and its values", err)
				}
				return
			}
			if err != nil || s.Auth != tc.want {
				t.Fatalf("auth %q err %v, want %q", s.Auth, err, tc.want)
			}
		})
	}
}

func TestTokenModeStack(t *testing.T) {
	tok := tokenMode(t)
	mcpID, mcp := oneResource(t, tok.json, "AWS::Lambda::Function", "FunctionsMcpFunction")
	secretID, _ := oneResource(t, tok.json, "AWS::SecretsManager::Secret", "AuthApiKeys")

	t.Run("public URL, the function checks keys", func(t *testing.T) {
		must(t, func() {
			tok.tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Url"), obj{"AuthType": "NONE", "InvokeMode": "RESPONSE_STREAM"})
		})
		env := mcp["Properties"].(obj)["Environment"].(obj)["Variables"].(obj)
		if env[config.EnvAuthMode] != config.AuthToken || flatten(env[config.EnvTokenSecret]) != "<"+secretID+">" {
			t.Errorf("mcp environment: %s=%v %s=%v", config.EnvAuthMode, env[config.EnvAuthMode], config.EnvTokenSecret, env[config.EnvTokenSecret])
		}
	})
	t.Run("the secret starts as an empty key list and is kept on delete", func(t *testing.T) {
		_, sec := oneResource(t, tok.json, "AWS::SecretsManager::Secret", "AuthApiKeys")
		if sec["DeletionPolicy"] != "Retain" || sec["Properties"].(obj)["SecretString"] != `{"keys":[]}` {
			t.Errorf("secret = %v", sec)
		}
	})
	t.Run("only the mcp role reads the secret, with GetSecretValue only", func(t *testing.T) {
		readers := 0
		// A role whose inline policy passes IAM's size limit gets overflow managed policies (CDK).
		policies := resources(tok.json, "AWS::IAM::Policy")
		maps.Copy(policies, resources(tok.json, "AWS::IAM::ManagedPolicy"))
		for id, p := range policies {
			for _, st := range p["Properties"].(obj)["PolicyDocument"].(obj)["Statement"].([]interface{}) {
				s := st.(obj)
				if !strings.Contains(flatten(s["Resource"]), secretID) {
					continue
				}
				readers++
				if !strings.HasPrefix(id, "FunctionsMcp") || flatten(s["Action"]) != "secretsmanager:GetSecretValue" {
					t.Errorf("%s: %v on the secret", id, s["Action"])
				}
			}
		}
		if readers != 1 {
			t.Errorf("%d statements name the secret, want 1", readers)
		}
		_ = mcpID
	})
	t.Run("outputs: token client config, key command, no IAM proxy", func(t *testing.T) {
		outs := tok.json["Outputs"].(obj)
		for _, gone := range []string{"McpProxyCommand", "McpCallerPolicy"} {
			if _, ok := outs[gone]; ok {
				t.Errorf("token mode outputs %s", gone)
			}
		}
		v := flatten(outs["McpClientConfig"].(obj)["Value"])
		var cfg struct {
			McpServers map[string]struct {
				Type    string            `json:"type"`
				URL     string            `json:"url"`
				Headers map[string]string `json:"headers"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(v), &cfg); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
		srv := cfg.McpServers["mcpbatch"]
		if srv.Type != "http" || !strings.HasSuffix(srv.URL, "mcp") || srv.Headers["Authorization"] != "Bearer ${MCPBATCH_API_KEY}" {
			t.Errorf("client config = %s", v)
		}
		if d, _ := outs["McpUrl"].(obj)["Description"].(string); !strings.Contains(d, "token auth") {
			t.Errorf("McpUrl description %q does not say token auth", d)
		}
		cmd := flatten(outs["AddApiKeyCommand"].(obj)["Value"])
		for _, want := range []string{"openssl rand -hex 32", "sha256sum", "put-secret-value", "<" + secretID + ">"} {
			if !strings.Contains(cmd, want) {
				t.Errorf("AddApiKeyCommand lacks %q: %s", want, cmd)
			}
		}
	})
	t.Run("cdk-nag: no unsuppressed errors", func(t *testing.T) {
		ann := assertions.Annotations_FromStack(tok.stack.Stack)
		for _, e := range *ann.FindError(jsii.String("*"), assertions.Match_AnyValue()) {
			t.Errorf("%s: %v", *e.Id, e.Entry.Data)
		}
	})
	t.Run("iam mode has no API-key secret", func(t *testing.T) {
		// The Anthropic key secret (reconciler.go) exists in both modes.
		if n := len(named(resources(fx.main.json, "AWS::SecretsManager::Secret"), "Auth")); n != 0 {
			t.Errorf("iam mode has %d API-key secrets", n)
		}
	})
}
