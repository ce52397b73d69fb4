package service

import (
	"strings"
	"testing"
)

// TestInputAllowWholeSegments: an allow-list entry opens its folder and what
// is under it, never a sibling that merely starts with the same letters, and
// a bare bucket opens nothing.
func TestInputAllowWholeSegments(t *testing.T) {
	c := CallerInputs{Bucket: "stack-bucket", Allow: []string{"s3://data/shared", "s3://data/team/", "s3://whole-bucket", "s3://whole-bucket2/"}}
	for _, tc := range []struct {
		uri string
		ok  bool
	}{
		{"s3://data/shared/a.jsonl", true},
		{"s3://data/shared/deep/a.jsonl", true},
		{"s3://data/shared-x/a.jsonl", false},
		{"s3://data/sharedfile.jsonl", false},
		{"s3://data/shared", false},
		{"s3://data/team/a.jsonl", true},
		{"s3://data/teams/a.jsonl", false},
		{"s3://data/shared/../private/a.jsonl", false},
		{"s3://whole-bucket/a.jsonl", false},
		{"s3://whole-bucket2/a.jsonl", false},
		{"s3://whole-bucket-other/a.jsonl", false},
	} {
		err := c.CheckCallerInput("input_uri", "alice", tc.uri)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want allowed %v", tc.uri, err, tc.ok)
		}
	}
	if err := CheckInputAllow([]string{"s3://data/shared", "s3://bucket"}); err == nil || !strings.Contains(err.Error(), "s3://bucket") {
		t.Errorf("a bare bucket in the allow-list: %v, want refused by name", err)
	}
	if err := CheckInputAllow([]string{"s3://data/shared", "data/x"}); err == nil {
		t.Error("a non-s3 entry accepted")
	}
	if err := CheckInputAllow([]string{"s3://data/shared", "s3://data/team/"}); err != nil {
		t.Error(err)
	}
}
