package s3blob

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// PutPresigner is the part of *s3.PresignClient that signs uploads.
type PutPresigner interface {
	PresignPutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error)
}

// PresignPut returns a SigV4 presigned PUT URL valid for ttl; the client must
// send contentType as its Content-Type (it is signed).
func (s *Store) PresignPut(ctx context.Context, uri, contentType string, ttl time.Duration) (string, error) {
	bucket, key, err := parse(uri)
	if err != nil {
		return "", err
	}
	if ttl <= 0 || ttl > maxPresignTTL {
		return "", fmt.Errorf("s3blob: presign put %s: ttl %s outside (0, %s]", uri, ttl, maxPresignTTL)
	}
	pp, ok := s.Presigner.(PutPresigner)
	if !ok {
		return "", fmt.Errorf("s3blob: presign put %s: the presigner cannot sign uploads", uri)
	}
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	req, err := pp.PresignPutObject(ctx, in, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("s3blob: presign put %s: %w", uri, err)
	}
	return req.URL, nil
}
