package local

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallTool calls a tool through a real MCP client session and decodes its
// structured result into out; a tool error comes back as an error carrying
// the tool's text. The measuring programs (the upload probe, make cost) drive
// the local suite through it as a user's client would.
func CallTool(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, out any) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				b.WriteString(t.Text)
			}
		}
		return fmt.Errorf("%s: %s", tool, b.String())
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decode: %w", tool, err)
	}
	return nil
}
