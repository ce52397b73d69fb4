package lambdaenv

import (
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
	"github.com/aws/aws-sdk-go-v2/service/sns"
)

func TestLambdaConfig(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      map[string]string
		wantErr  string
		endpoint string
		key      string
	}{
		{"role credentials from the environment", map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t"}, "", "", "AKIA"},
		{"endpoint override", map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL": "http://127.0.0.1:5000"}, "", "http://127.0.0.1:5000", "AKIA"},
		{"container credentials", map[string]string{"AWS_REGION": "eu-west-1", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:9/creds"}, "", "", ""},
		{"no region", map[string]string{"AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s"}, "AWS_REGION is not set", "", ""},
		{"no credentials", map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIA"}, "no credentials", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := lambdaConfig(func(k string) string { return c.env[k] })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.BaseEndpoint; (got == nil) != (c.endpoint == "") || (got != nil && *got != c.endpoint) {
				t.Errorf("BaseEndpoint %v, want %q", got, c.endpoint)
			}
			if c.key != "" {
				creds, err := cfg.Credentials.Retrieve(t.Context())
				if err != nil || creds.AccessKeyID != c.key {
					t.Errorf("credentials %+v, %v; want key %s", creds, err, c.key)
				}
			}
		})
	}
}

// A per-service endpoint (AWS_ENDPOINT_URL_<SERVICE>) reaches that service's
// client and no other, beside the general AWS_ENDPOINT_URL.
func TestLambdaConfigServiceEndpoint(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	t.Setenv("AWS_ENDPOINT_URL", "http://moto.invalid")
	t.Setenv("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", "http://sim.invalid")
	cfg, err := lambdaConfig(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(sagemakerruntime.NewFromConfig(cfg).Options().BaseEndpoint); got != "http://sim.invalid" {
		t.Errorf("SageMaker Runtime endpoint %q, want the per-service one", got)
	}
	if got := aws.ToString(sns.NewFromConfig(cfg).Options().BaseEndpoint); got != "http://moto.invalid" {
		t.Errorf("SNS endpoint %q, want the general one", got)
	}
}
