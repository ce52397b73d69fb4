package main

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestMCPCountsTokens: the mcp function, which counts dry runs' input with
// Bedrock's CountTokens, may call it on exactly the allowed foundation models;
// no other role may.
func TestMCPCountsTokens(t *testing.T) {
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		t.Run(sx.settings.StackName, func(t *testing.T) {
			tpl := sx.json
			want := foundationModels(expectedModelArns(sx.settings.BedrockModels))
			for id := range resources(tpl, "AWS::IAM::Role") {
				got := actionResources(roleStatements(t, tpl, id))["bedrock:CountTokens"]
				sort.Strings(got)
				switch {
				case strings.HasPrefix(id, "FunctionsMcpRole"):
					if !reflect.DeepEqual(got, want) {
						t.Errorf("mcp CountTokens on\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
				case len(got) > 0:
					t.Errorf("role %s may call CountTokens on %v", id, got)
				}
			}
		})
	}
}

// foundationModels are the foundation-model ARNs among arns.
func foundationModels(arns []string) []string {
	var out []string
	for _, a := range arns {
		if strings.Contains(a, ":foundation-model/") {
			out = append(out, a)
		}
	}
	return out
}
