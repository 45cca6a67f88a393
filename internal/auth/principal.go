// Package auth verifies the JWTs of DESIGN §4 and carries the verified
// caller through the request context.
package auth

import (
	"context"

	"github.com/voxgate/voxgate/internal/apierr"
)

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

// Caller is the verified caller of a handler on an authenticated route,
// or 401 UNAUTHORIZED if the route table forgot to authenticate it.
func Caller(ctx context.Context) (Principal, error) {
	if p, ok := FromContext(ctx); ok {
		return p, nil
	}
	return Principal{}, apierr.New(apierr.Unauthorized, "")
}
