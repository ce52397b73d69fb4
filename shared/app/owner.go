package app

import (
	"errors"
	"net/http"

	"github.com/aws/aws-lambda-go/lambdaurl"
)

// IAMOwner names the caller of an AWS_IAM Function URL: the principal ARN that
// Lambda verified from the SigV4 signature.
func IAMOwner(r *http.Request) (string, error) {
	req, ok := lambdaurl.RequestFromContext(r.Context())
	if !ok || req.RequestContext.Authorizer == nil || req.RequestContext.Authorizer.IAM == nil || req.RequestContext.Authorizer.IAM.UserARN == "" {
		return "", errors.New("no IAM caller in the Function URL request context")
	}
	return req.RequestContext.Authorizer.IAM.UserARN, nil
}
