package main

import (
	"reflect"
	"slices"
	"testing"
)

// TestAccountReadsIAM: the reconciler (the function that refreshes the
// account's model facts and prices) may make the five reads, on "*" without conditions
// (none of the actions has a resource type); no other function may.
func TestAccountReadsIAM(t *testing.T) {
	tpl := fx.main.json
	want := map[string][]string{}
	for _, group := range accountReadActions {
		for _, a := range group {
			want[a] = []string{"*"}
		}
	}
	for id := range resources(tpl, "AWS::IAM::Role") {
		stmts := roleStatements(t, tpl, id)
		got := actionResources(stmts)
		refresher := slices.ContainsFunc([]string{"ReconcilerRole"}, func(p string) bool { return len(id) > len(p) && id[:len(p)] == p })
		for a, w := range want {
			switch {
			case refresher && !reflect.DeepEqual(got[a], w):
				t.Errorf("%s: %s on %v, want %v", id, a, got[a], w)
			case !refresher && got[a] != nil:
				t.Errorf("%s: %s granted to a function that never refreshes the account's facts", id, a)
			}
		}
		for _, s := range stmts {
			if slices.ContainsFunc(s.Actions, func(a string) bool { return want[a] != nil }) && (len(s.Condition) > 0 || len(s.Actions) > 3) {
				t.Errorf("%s: statement %s: %v with condition %v", id, s.Sid, s.Actions, s.Condition)
			}
		}
	}
}
