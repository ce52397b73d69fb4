package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// registrations add tools and resources kept in files of their own (one per
// feature), in file-name order, after the core tools of server.go. A feature
// file registers itself with register from an init func.
var registrations []func(*Server, *mcp.Server)

func register(f func(*Server, *mcp.Server)) { registrations = append(registrations, f) }
