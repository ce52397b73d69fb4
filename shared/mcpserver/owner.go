package mcpserver

import (
	"context"
	"net/http"
)

type ownerKey struct{}

// ownerHeader carries the authenticated owner from the HTTP layer to tool
// handlers; any value a client sends is dropped before it is set.
const ownerHeader = "X-Mcpbatch-Owner"

// OwnerFunc authenticates a request and names its owner. An error means 401.
type OwnerFunc func(r *http.Request) (string, error)

// WithOwner returns ctx carrying owner (for in-process callers and tests).
func WithOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

func ownerFromContext(ctx context.Context) string {
	o, _ := ctx.Value(ownerKey{}).(string)
	return o
}
