package config_test

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/config"
	"github.com/mcpbatch/mcpbatch/shared/model"
)

// TestReadmeDefaultModels: the default allowed models the tool reference
// names (by their catalog names) are DefaultBedrockModels, and the profiles
// among them are the us., eu. and global. profiles the catalog lists for
// them, every one; the Anthropic API default it states is
// DefaultAnthropicModels.
func TestReadmeDefaultModels(t *testing.T) {
	b, err := os.ReadFile("../mcpserver/README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	m := regexp.MustCompile("The default allows (.*?), each also through its `us\\.`, `eu\\.` and `global\\.` profiles where the catalog lists them").FindStringSubmatch(text)
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
			if !slices.Contains(model.AllowGeographies, geo) {
				t.Errorf("default %s: a %s profile; the README says us., eu. and global. profiles", id, geo)
			}
			continue
		}
		for _, g := range model.AllowGeographies {
			if p := md.Profiles[g]; p != "" && !slices.Contains(config.DefaultBedrockModels, p) {
				t.Errorf("default %s: its %s profile %s is not allowed by default", id, g, p)
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

// TestReadmeSageMakerDefaults: the invoke_endpoint deadline and response cap
// the tool reference states are the defaults the wiring applies.
func TestReadmeSageMakerDefaults(t *testing.T) {
	b, err := os.ReadFile("../mcpserver/README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	d := regexp.MustCompile("overall deadline \\(([0-9]+) s, `" + config.EnvSageMakerDeadlineSeconds + "`\\)").FindStringSubmatch(text)
	if d == nil || d[1] != strconv.Itoa(config.DefaultSageMakerDeadlineSeconds) {
		t.Errorf("README's invoke_endpoint deadline %v, default %d s", d, config.DefaultSageMakerDeadlineSeconds)
	}
	r := regexp.MustCompile("Responses over ([0-9]+) MiB \\(`-c sagemakerMaxResponseBytes=…`\\)").FindStringSubmatch(text)
	if r == nil || r[1] != strconv.Itoa(config.DefaultSageMakerMaxResponseBytes>>20) {
		t.Errorf("README's response cap %v, default %d bytes", r, config.DefaultSageMakerMaxResponseBytes)
	}
}
