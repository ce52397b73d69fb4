package awsreports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/mcpbatch/mcpbatch/shared/blob/s3blob"
	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/pipeline"
)

// LinkSigner signs report links with one identity's credentials. A SigV4
// presigned URL stops working when the credentials that signed it expire, so
// a link signed with a Lambda role's session dies with the session (hours),
// whatever X-Amz-Expires says. LinkSigner therefore signs each link for no
// longer than its credentials last and says so; with an access key's
// credentials (which do not expire) a link works the whole ttl.
type LinkSigner struct {
	Blobs *s3blob.Store // presigns with Creds
	Creds aws.CredentialsProvider
	Now   func() time.Time
}

var _ pipeline.LinkSigner = (*LinkSigner)(nil)

// NewLinkSigner signs with cfg's credentials.
func NewLinkSigner(cfg aws.Config) *LinkSigner {
	return &LinkSigner{Blobs: s3blob.New(s3.NewFromConfig(cfg), s3blob.Options{}), Creds: cfg.Credentials}
}

// SignLink signs a GET of uri for ttl, or for as long as the credentials last
// when that is sooner (whole minutes, so the stated time is never generous).
func (l *LinkSigner) SignLink(ctx context.Context, uri string, ttl time.Duration) (string, time.Duration, error) {
	c, err := l.Creds.Retrieve(ctx)
	if err != nil {
		return "", 0, fmt.Errorf("sign link %s: credentials: %w", uri, err)
	}
	valid := ttl
	if c.CanExpire {
		now := time.Now
		if l.Now != nil {
			now = l.Now
		}
		valid = min(ttl, c.Expires.Sub(now()).Truncate(time.Minute))
		if valid <= 0 {
			return "", 0, fmt.Errorf("sign link %s: the signing credentials expire at %s", uri, c.Expires.Format(time.RFC3339))
		}
	}
	link, err := l.Blobs.PresignGet(ctx, uri, valid)
	return link, valid, err
}

// LinkSignerFromEnv is the signer of report links: the access key in the
// secret config.EnvLinkSigner names (links work their whole ttl), else the
// function's own credentials (links work while its session lasts).
func LinkSignerFromEnv(ctx context.Context, cfg aws.Config) (*LinkSigner, error) {
	name := os.Getenv(config.EnvLinkSigner)
	if name == "" {
		return NewLinkSigner(cfg), nil
	}
	out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("read link signer secret %s: %w", name, err)
	}
	var key struct {
		AccessKeyID     string `json:"access_key_id"`
		SecretAccessKey string `json:"secret_access_key"`
	}
	if out.SecretString == nil || json.Unmarshal([]byte(*out.SecretString), &key) != nil || key.AccessKeyID == "" || key.SecretAccessKey == "" {
		return nil, errors.New("link signer secret " + name + ": want JSON {\"access_key_id\", \"secret_access_key\"}")
	}
	long := cfg.Copy()
	long.Credentials = credentials.NewStaticCredentialsProvider(key.AccessKeyID, key.SecretAccessKey, "")
	return NewLinkSigner(long), nil
}
