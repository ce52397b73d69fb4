package main

import "github.com/aws/jsii-runtime-go"

// Reads of the account's model facts (shared/service/refresh): only the
// reconciler makes them, daily and at its cold start when the stored ones are
// a day old; the other functions read the stored snapshot from the table. Per the Service Authorization Reference (Amazon
// Bedrock and Service Quotas, read 2026-11-30) none of these four actions has
// a resource type, so each needs Resource "*"; and ListServiceQuotas takes no
// condition key (servicequotas:service filters quota-increase requests, not
// reads): a condition on it would deny the read instead of narrowing it. They
// return model metadata and quota values, never data. pricing:GetProducts
// (AWS Price List, Service Authorization Reference "Actions defined by AWS
// Price List") has no resource type or condition key either; it returns
// public list prices.
var accountReadActions = [][]string{
	{"bedrock:ListFoundationModels", "bedrock:GetFoundationModelAvailability", "bedrock:ListInferenceProfiles"},
	{"servicequotas:ListServiceQuotas"},
	{"pricing:GetProducts"},
}

var wildAccountReads = wildcard{
	pattern: `/^Resource::\*$/`,
	reason: "bedrock:ListFoundationModels, GetFoundationModelAvailability, ListInferenceProfiles and " +
		"servicequotas:ListServiceQuotas and pricing:GetProducts have no resource type in the IAM Service " +
		"Authorization Reference and only accept Resource \"*\"; they return model metadata, quota values and " +
		"public list prices, not data.",
}

// grantAccountReads lets fns read the account's model facts.
func grantAccountReads(fns ...*GoFunction) {
	for _, f := range fns {
		f.Role.AddToPrincipalPolicy(allow("ReadAccountModels", accountReadActions[0], []*string{jsii.String("*")}, nil))
		f.Role.AddToPrincipalPolicy(allow("ReadBedrockQuotas", accountReadActions[1], []*string{jsii.String("*")}, nil))
		f.Role.AddToPrincipalPolicy(allow("ReadPriceList", accountReadActions[2], []*string{jsii.String("*")}, nil))
		suppressWildcards(f.Role, wildAccountReads)
	}
}
