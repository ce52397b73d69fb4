package console_test

import (
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpbatch/mcpbatch/shared/console"
)

// The App page is one document: one inline script and one inline stylesheet,
// each allowed by its hash in the page's own CSP, and nothing else allowed.
func TestAppHTMLCSP(t *testing.T) {
	page := console.AppHTML()
	csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]+)"`).FindStringSubmatch(page)
	if csp == nil {
		t.Fatal("no CSP meta")
	}
	scripts := regexp.MustCompile(`(?s)<script type="module">(.*?)</script>`).FindAllStringSubmatch(page, -1)
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(page, -1)
	if len(scripts) != 1 || len(styles) != 1 || strings.Count(page, "<script") != 1 {
		t.Fatalf("%d scripts, %d styles, %d <script tags; want one each", len(scripts), len(styles), strings.Count(page, "<script"))
	}
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	for _, want := range []string{"default-src 'none'", "script-src " + hash(scripts[0][1]) + ";", "style-src " + hash(styles[0][1]) + ";", "connect-src 'none'"} {
		if !strings.Contains(csp[1], want) {
			t.Errorf("CSP %q lacks %q", csp[1], want)
		}
	}
	for _, want := range []string{"globalThis.McpApps={", "PostMessageTransport:", "App:", "McpbatchView", "app.connect("} {
		if !strings.Contains(scripts[0][1], want) {
			t.Errorf("the App script lacks %q", want)
		}
	}
}
