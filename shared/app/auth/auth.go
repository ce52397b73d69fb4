// Package auth picks how the mcp function names its caller (iam or token mode)
// and reads token mode's hashed API keys. It lives apart from package app so
// only the mcp function links the Secrets Manager client.
package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpbatch/mcpbatch/shared/app"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/mcpserver"
)

// SecretsAPI is the one Secrets Manager call the key source makes.
type SecretsAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// keyLoadTimeout bounds one read of the key store on the request path.
const keyLoadTimeout = 5 * time.Second

// SecretKeys reads the hashed API keys ({"keys":[{"name","sha256"}]}) from a
// Secrets Manager secret.
func SecretKeys(c SecretsAPI, secretID string) mcpserver.KeySource {
	return func() ([]mcpserver.TokenKey, error) {
		ctx, cancel := context.WithTimeout(context.Background(), keyLoadTimeout)
		defer cancel()
		out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(secretID)})
		if err != nil {
			return nil, fmt.Errorf("get secret %s: %w", secretID, err)
		}
		keys, err := mcpserver.ParseTokenFile([]byte(aws.ToString(out.SecretString)))
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", secretID, err)
		}
		return keys, nil
	}
}

// OwnerFromEnv picks how the mcp function names its caller from the auth mode the
// stack set: the IAM principal (default) or the name of the caller's API key.
func OwnerFromEnv(cfg aws.Config) (mcpserver.OwnerFunc, error) {
	switch mode := config.Get(config.EnvAuthMode, config.AuthIAM); mode {
	case config.AuthIAM:
		return app.IAMOwner, nil
	case config.AuthToken:
		secret, err := config.Must(config.EnvTokenSecret)
		if err != nil {
			return nil, fmt.Errorf("%s=token: %w", config.EnvAuthMode, err)
		}
		src := SecretKeys(secretsmanager.NewFromConfig(cfg), secret)
		return (&mcpserver.TokenAuth{Load: src}).Owner, nil
	default:
		return nil, fmt.Errorf("%s=%q: want one of %v", config.EnvAuthMode, mode, config.AuthModes)
	}
}
