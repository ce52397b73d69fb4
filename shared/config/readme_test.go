package config_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// TestReadmeDefaultModels: the default allowed models the tool reference
// names (by their catalog names) are DefaultBedrockModels, and the profiles
// among them are the us. and global. profiles of its Claude models; the
// Anthropic API default it states is DefaultAnthropicModels.
func TestReadmeDefaultModels(t *testing.T) {
	b, err := os.ReadFile("../mcpserver/README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	m := regexp.MustCompile("The default allows (.*?), the Claude models also through their `us\\.` or `global\\.` profiles").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("no default model sentence")
	}
	want := strings.Split(strings.ReplaceAll(m[1], " and ", ", "), ", ")
	cat := model.Default()
	var got []string
	for _, id := range config.DefaultBedrockModels {
		md, ok := cat.Lookup(id)
		if !ok {
			t.Fatalf("default model %s is not in the catalog", id)
		}
		if !slices.Contains(got, md.Name) {
			got = append(got, md.Name)
		}
		if geo, _, isProfile := strings.Cut(id, "."); isProfile && !strings.HasPrefix(id, md.ID) {
			if (geo != "us" && geo != "global") || md.Family != "claude" {
				t.Errorf("default %s: a %s profile of a %s model; the README says us. or global. profiles of Claude models", id, geo, md.Family)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("default models are %q; the README says %q", got, want)
	}

	am := regexp.MustCompile("`MCPBATCH_ANTHROPIC_MODELS` \\(default `([^`]*)`\\)").FindStringSubmatch(text)
	if am == nil || am[1] != strings.Join(config.DefaultAnthropicModels, ",") {
		t.Errorf("README's Anthropic default %v, DefaultAnthropicModels %v", am, config.DefaultAnthropicModels)
	}
}
