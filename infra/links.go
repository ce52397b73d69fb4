package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/mcpbatch/mcpbatch/shared/config"
)

// linkSigner is the long-lived identity report links are signed with. A SigV4
// presigned URL stops working when the credentials that signed it expire: signed
// by the nightly-report role's session it dies within hours, though the
// notification promises 7 days (S3's maximum). A link served through the suite
// would need a public endpoint (the Function URL takes IAM or bearer callers,
// not mail readers) and a token scheme of its own; an IAM user's access key
// does not expire, so the link works its whole 7 days. The user may only read
// reports/ objects; the key lives in a secret only nightly-report may read.
// Rotating it: create a second key, put it in the secret, delete the first
// (links signed with the first stop then).
func (r *Reports) linkSigner(p *ReportsProps) {
	c := r.Scope
	user := awsiam.NewUser(c, jsii.String("LinkSigner"), &awsiam.UserProps{})
	user.AddToPrincipalPolicy(allow("ReadReports", []string{"s3:GetObject"}, p.Data.ObjectArns(PrefixReports), nil))
	suppressWildcards(user, wildReports)
	key := awsiam.NewAccessKey(c, jsii.String("LinkSignerKey"), &awsiam.AccessKeyProps{User: user})
	secret := awssecretsmanager.NewSecret(c, jsii.String("LinkSignerSecret"), &awssecretsmanager.SecretProps{
		Description: jsii.String("mcpbatch report link signer: access key of a user that may only read reports/"),
		SecretObjectValue: &map[string]awscdk.SecretValue{
			"access_key_id":     awscdk.SecretValue_UnsafePlainText(key.AccessKeyId()), // an id, not a secret
			"secret_access_key": key.SecretAccessKey(),
		},
	})
	suppress(secret, "AwsSolutions-SMG4",
		"The secret holds an IAM access key; rotating it is creating a new key and putting it here, "+
			"which the operator does (see infra/links.go); a rotation Lambda would end the links signed with the old key early.")
	nr := r.NightlyReport
	nr.Function.AddEnvironment(jsii.String(config.EnvLinkSigner), secret.SecretArn(), nil)
	nr.Role.AddToPrincipalPolicy(allow("ReadLinkSigner", []string{"secretsmanager:GetSecretValue"}, []*string{secret.SecretArn()}, nil))
}
