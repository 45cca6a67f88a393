// Package auth verifies the JWTs of DESIGN §4 and carries the verified
// caller through the request context.
package auth

import "context"

// Roles a token may carry.
const (
	RoleAdmin   = "admin"
	RoleFinance = "finance"
)

// Principal is the verified caller.
type Principal struct {
	UserID string // the token's sub
	Role   string // "", "admin" or "finance"
	Plan   string // the token's plan claim; quota resolves the effective plan
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the verified caller. ok is false on routes that do not
// authenticate.
func FromContext(ctx context.Context) (p Principal, ok bool) {
	p, ok = ctx.Value(ctxKey{}).(Principal)
	return p, ok
}
