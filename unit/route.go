package unit

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
)

// The router as the endpoints whose callers name a route as their model
// (completions, responses) need it: llm.Router, whose models are its
// routes. Another provider serves none of them.
type (
	routeLister interface{ Routes() []string }
	routeModels interface{ Models(route string) []string }
	unhonouring interface {
		Unhonoured(route string, req llm.Request) string
	}
)

// Routes are the router's route names, none when the provider is not one.
func (e *Env) Routes() []string {
	if r, ok := e.Provider.(routeLister); ok {
		return r.Routes()
	}
	return nil
}

// RouteAllowed reports whether name is one of the router's routes and
// allows takes it.
func (e *Env) RouteAllowed(name string, allows func(string) bool) bool {
	for _, r := range e.Routes() {
		if r == name {
			return allows(name)
		}
	}
	return false
}

// ModelsOf are the models that may answer route: its targets', else
// fallback (chat.route's).
func (e *Env) ModelsOf(route string, fallback []string) []string {
	if r, ok := e.Provider.(routeModels); ok {
		if ms := r.Models(route); len(ms) > 0 {
			return ms
		}
	}
	return fallback
}

// CheckRoute is what precedes admission of a request for route, so that a
// refused one counts nothing (DESIGN §9): the route must be one the
// caller's plan may use (only a route some plan may not use costs the
// look-up of the caller's plan) and one the router has, else
// ErrNoSuchModel; and field names a field of lreq no target of the route
// can honour, "" when every one can (the caller refuses it by name, never
// sends it without it). Admission's own plan is checked again after.
func (e *Env) CheckRoute(ctx context.Context, p auth.Principal, route string, lreq llm.Request) (field string, err error) {
	allows := func(p config.Plan) bool { return p.AllowsRoute(route) }
	if !e.Quota.AllPlans(allows) {
		_, plan, err := e.Quota.PlanFor(ctx, p)
		if err != nil {
			return "", err
		}
		if !allows(plan) {
			return "", ErrNoSuchModel()
		}
	}
	if !e.RouteAllowed(route, func(string) bool { return true }) {
		return "", ErrNoSuchModel()
	}
	if r, ok := e.Provider.(unhonouring); ok {
		return r.Unhonoured(route, lreq), nil
	}
	return "", nil
}

// AuditRider is the pending audit row of unit id, of kind, as a rider of
// its admission (quota.Rider, docs/quota.md "Riders"): inserted in the
// admission's round trip and transaction, only if it admits. What the
// row's check refuses is kept in *refused for the caller, which fails the
// unit as a Begin that failed did. Its input hash is the hash of the
// conversation it sends, computed once for both of the unit's rows.
func (e *Env) AuditRider(kind audit.Kind, id string, p auth.Principal, route string, lreq llm.Request, refused *error) (quota.Rider, string) {
	raw, _ := json.Marshal(lreq.Messages)
	hash := audit.Hash(string(raw))
	row := audit.Row{ID: id, Kind: kind, UserID: p.UserID, SessionID: id, Route: route, InputHash: hash}
	return quota.Rider{
		Queue:     func(b *pgx.Batch) { *refused = e.Audit.QueueBeginIf(b, row, quota.AdmittedSQL) },
		Abandoned: func(b *pgx.Batch) { e.Audit.QueueAbandoned(b, id) },
	}, hash
}
