package app

import (
	"errors"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/lambdaurl"
)

// IAMOwner names the caller of an AWS_IAM Function URL: the principal ARN that
// Lambda verified from the SigV4 signature, with an assumed-role session reduced
// to its role (see ownerOfPrincipal).
func IAMOwner(r *http.Request) (string, error) {
	req, ok := lambdaurl.RequestFromContext(r.Context())
	if !ok || req.RequestContext.Authorizer == nil || req.RequestContext.Authorizer.IAM == nil || req.RequestContext.Authorizer.IAM.UserARN == "" {
		return "", errors.New("no IAM caller in the Function URL request context")
	}
	return ownerOfPrincipal(req.RequestContext.Authorizer.IAM.UserARN), nil
}

// ownerOfPrincipal maps an assumed-role session ARN
// (arn:<partition>:sts::<account>:assumed-role/<RoleName>/<session>) to the role,
// arn:<partition>:iam::<account>:role/<RoleName>. The session name is chosen by
// whoever assumes the role (and tools change it per credential refresh), so it
// must not decide who owns a job: everyone who may assume the role is the same
// owner. The STS ARN carries no role path, so a role created under a path
// (/team/Analyst) still maps to role/Analyst; role names are unique per account,
// so this names one role. IAM users, the root, federated users and anything
// that does not parse as an assumed-role session are returned unchanged.
func ownerOfPrincipal(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sts" || parts[4] == "" {
		return arn
	}
	res, ok := strings.CutPrefix(parts[5], "assumed-role/")
	if !ok {
		return arn
	}
	role, session, ok := strings.Cut(res, "/")
	if !ok || role == "" || session == "" {
		return arn
	}
	return "arn:" + parts[1] + ":iam::" + parts[4] + ":role/" + role
}
