package server

import (
	"net/http"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
)

type route struct {
	pattern string
	handler http.Handler
}

// routeTable is the whole API surface of voxgate, in one place. Each entry
// says who may call it: public, any user, or a role.
func (s *Server) routeTable() []route {
	return []route{
		{"GET /healthz", s.public(s.healthz)},
		{"GET /readyz", s.public(s.readyz)},
		{"GET /metrics", s.metricsHandler()},
		{"GET /openapi.json", s.public(s.openapi)},

		{"GET /v1/me", s.user(s.me)},
		{"GET /v1/tools", s.user(s.tools.HandleList)},

		{"PUT /v1/admin/users/{id}/plan", s.admin(s.quota.SetPlanHandler)},
	}
}

// public serves h without authentication.
func (s *Server) public(h httpx.HandlerFunc) http.Handler { return httpx.Handle(h) }

// user serves h to any caller with a valid token.
func (s *Server) user(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(s.authenticate(h, nil))
}

// admin serves h to role admin only.
func (s *Server) admin(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(s.authenticate(h, []string{auth.RoleAdmin}))
}

// finance serves h to roles admin and finance (DESIGN §10's GET routes).
func (s *Server) finance(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(s.authenticate(h, []string{auth.RoleAdmin, auth.RoleFinance}))
}

// ai serves h to any user unless the AI kill switch is off, in which case
// it answers 503 AI_FEATURE_DISABLED before any other work.
func (s *Server) ai(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(s.authenticate(s.aiEnabled(h), nil))
}
