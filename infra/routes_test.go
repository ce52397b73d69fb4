package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/app/routes"
)

// The stack's EventBridge rules are the route table (shared/app/routes),
// which make dev routes by too (shared/app/local's TestRoutesAreTheTable):
// one rule a row, its source and detail types, on the row's bus, to the
// row's function. The reconciler's schedule is the one rule without a pattern.
func TestRulesAreTheRouteTable(t *testing.T) {
	type rule struct {
		Function    string
		Source      string
		DetailTypes []string
		DefaultBus  bool
	}
	var want []rule
	for _, r := range routes.Table {
		want = append(want, rule{r.Function, r.Source, slices.Sorted(slices.Values(r.DetailTypes)), r.DefaultBus})
	}
	byFunction := func(a, b rule) int { return strings.Compare(a.Function, b.Function) }
	slices.SortFunc(want, byFunction)
	for _, sx := range []*synthesized{&fx.main, &fx.alt} {
		t.Run(sx.settings.StackName, func(t *testing.T) {
			tpl := sx.json
			// A function's name is in its role's description ("mcpbatch <name> function").
			roleName := map[string]string{}
			for id, r := range resources(tpl, "AWS::IAM::Role") {
				d, _ := props(r)["Description"].(string)
				if name, ok := strings.CutPrefix(d, "mcpbatch "); ok && strings.HasSuffix(name, " function") {
					roleName["<"+id+".Arn>"] = strings.TrimSuffix(name, " function")
				}
			}
			fnName := map[string]string{}
			for id, f := range resources(tpl, "AWS::Lambda::Function") {
				fnName["<"+id+".Arn>"] = roleName[flatten(props(f)["Role"])]
			}
			var got []rule
			for id, r := range resources(tpl, "AWS::Events::Rule") {
				p := props(r)
				pattern, ok := p["EventPattern"].(obj)
				if !ok {
					continue
				}
				targets := p["Targets"].([]interface{})
				if len(targets) != 1 {
					t.Fatalf("rule %s has targets %v, want one function", id, targets)
				}
				var types []string
				for _, dt := range pattern["detail-type"].([]interface{}) {
					types = append(types, dt.(string))
				}
				src := pattern["source"].([]interface{})
				if len(src) != 1 {
					t.Fatalf("rule %s takes sources %v, want one", id, src)
				}
				_, onBus := p["EventBusName"]
				got = append(got, rule{fnName[flatten(targets[0].(obj)["Arn"])], src[0].(string), slices.Sorted(slices.Values(types)), !onBus})
			}
			slices.SortFunc(got, byFunction)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("the stack's rules:\n%+v\nthe route table:\n%+v", got, want)
			}
		})
	}
}
