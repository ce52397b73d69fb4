package app

import (
	"net/http/httptest"
	"testing"
)

func TestOwnerOfPrincipal(t *testing.T) {
	tests := []struct {
		name, arn, want string
	}{
		{"assumed role is the role", "arn:aws:sts::123456789012:assumed-role/Analyst/alice-cli", "arn:aws:iam::123456789012:role/Analyst"},
		{"session name does not matter", "arn:aws:sts::123456789012:assumed-role/Analyst/botocore-session-1717", "arn:aws:iam::123456789012:role/Analyst"},
		{"session name with slash-free specials", "arn:aws:sts::123456789012:assumed-role/Role.With-Chars_1/a@b.c=d,e", "arn:aws:iam::123456789012:role/Role.With-Chars_1"},
		{"other partition", "arn:aws-cn:sts::123456789012:assumed-role/Analyst/s", "arn:aws-cn:iam::123456789012:role/Analyst"},
		{"gov partition", "arn:aws-us-gov:sts::123456789012:assumed-role/Analyst/s", "arn:aws-us-gov:iam::123456789012:role/Analyst"},
		{"iam user unchanged", "arn:aws:iam::123456789012:user/alice", "arn:aws:iam::123456789012:user/alice"},
		{"iam user with path unchanged", "arn:aws:iam::123456789012:user/team/alice", "arn:aws:iam::123456789012:user/team/alice"},
		{"root unchanged", "arn:aws:iam::123456789012:root", "arn:aws:iam::123456789012:root"},
		{"federated user unchanged", "arn:aws:sts::123456789012:federated-user/bob", "arn:aws:sts::123456789012:federated-user/bob"},
		{"malformed assumed-role (no session) unchanged", "arn:aws:sts::123456789012:assumed-role/Analyst", "arn:aws:sts::123456789012:assumed-role/Analyst"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ownerOfPrincipal(tc.arn); got != tc.want {
				t.Errorf("IAMOwner(%s) = %s, want %s", tc.arn, got, tc.want)
			}
		})
	}
}

func TestIAMOwnerMissing(t *testing.T) {
	r := httptest.NewRequest("POST", "/mcp", nil)
	if _, err := IAMOwner(r); err == nil {
		t.Fatal("want an error without a Function URL request context")
	}
}
