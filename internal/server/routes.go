package server

import (
	"context"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
)

// Route is one entry of the route table: a ServeMux pattern and its
// handler, already wrapped for who may call it (Public, User, Admin,
// Finance, AI).
type Route struct {
	Pattern string
	Handler http.Handler
	// Stream marks a route whose response may rightly outlive
	// server.request_timeout (SSE, long exports). It gets neither the
	// per-request deadline nor a write deadline and bounds its own work.
	Stream bool
}

// writeMargin is how long past the request deadline a response may take to
// write, so an error answered at the deadline still reaches the client.
const writeMargin = 5 * time.Second

// bounded gives a non-streaming route its deadline: the context ends after
// server.request_timeout, so database calls made with it abort and answer
// 503, and the response must be written soon after.
func (s *Server) bounded(h http.Handler) http.Handler {
	timeout := s.cfg.Server.RequestTimeout
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout + writeMargin))
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Public serves h without authentication.
func (s *Server) Public(h httpx.HandlerFunc) http.Handler { return httpx.Handle(h) }

// User serves h to any caller with a valid token.
func (s *Server) User(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(s.authenticate(h, nil))
}

// Admin serves h to role admin only.
func (s *Server) Admin(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(s.authenticate(h, []string{auth.RoleAdmin}))
}

// Finance serves h to roles admin and finance (DESIGN §10's GET routes).
func (s *Server) Finance(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(s.authenticate(h, []string{auth.RoleAdmin, auth.RoleFinance}))
}

// AI serves h to any user unless the AI kill switch is off, in which case
// it answers 503 AI_FEATURE_DISABLED before any other work.
func (s *Server) AI(h httpx.HandlerFunc) http.Handler {
	return httpx.Handle(s.authenticate(s.aiEnabled(h), nil))
}
