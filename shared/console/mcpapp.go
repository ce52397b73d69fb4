package console

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// AppMIMEType is the MCP Apps resource type (SEP-1865).
const AppMIMEType = "text/html;profile=mcp-app"

// AppHTML is the job view as an MCP App: one self-contained page (the
// official ext-apps View bundle, the shared job view and the App script
// inlined) whose own Content-Security-Policy allows exactly its one script
// and one stylesheet by hash, and no network at all. An injected inline
// script has another hash and does not run.
func AppHTML() string {
	appOnce.Do(func() { appPage = buildAppPage() })
	return appPage
}

var (
	appOnce sync.Once
	appPage string
)

// exportClause is the bundle's closing "export{a as B,...};".
var exportClause = regexp.MustCompile(`export\{([^}]*)\};?\s*$`)

func buildAppPage() string {
	read := func(name string) string {
		b, err := files.ReadFile("static/" + name)
		if err != nil {
			panic(fmt.Sprintf("console: embedded %s missing: %v", name, err)) // a broken build
		}
		return string(b)
	}
	// The bundle is an ES module ending in one export clause; inline, its
	// exports become the McpApps object the App script reads.
	bundle := read("vendor/ext-apps-2.0.4-app-with-deps.js")
	m := exportClause.FindStringSubmatchIndex(bundle)
	if m == nil {
		panic("console: the ext-apps bundle has no closing export clause")
	}
	var fields []string
	for _, part := range strings.Split(bundle[m[2]:m[3]], ",") {
		local, exported, ok := strings.Cut(strings.TrimSpace(part), " as ")
		if !ok {
			exported = local
		}
		fields = append(fields, exported+":"+local)
	}
	script := bundle[:m[0]] + ";globalThis.McpApps={" + strings.Join(fields, ",") + "};\n" +
		read("jobview.js") + "\n" + read("mcpapp.js")
	css := read("jobview.css") + read("mcpapp.css")
	if strings.Contains(strings.ToLower(script), "</script") {
		panic("console: the App script holds </script")
	}
	csp := "default-src 'none'; script-src '" + sha(script) + "'; style-src '" + sha(css) + "'; img-src data:; " +
		"connect-src 'none'; base-uri 'none'; form-action 'none'"
	page := read("mcpapp.html")
	return strings.NewReplacer("{{csp}}", csp, "{{css}}", css, "{{script}}", script).Replace(page)
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
