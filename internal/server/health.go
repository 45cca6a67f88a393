package server

import (
	"context"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/quota"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers 200 only when this replica should get traffic: not
// draining, the database answers, and its schema is at least ours.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if s.Draining() {
		return apierr.New(apierr.Unavailable, "This replica is shutting down.").WithRetry(1)
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	v, err := database.SchemaVersion(ctx, s.pool)
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "The database is not reachable.", err).WithRetry(1)
	}
	if want := database.Latest(); v < want {
		return apierr.Errorf(apierr.Unavailable, "The database schema is at version %d; this binary needs %d.", v, want).WithRetry(5)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{"status": "ready", "schema": v})
	return nil
}

type meResponse struct {
	UserID string                      `json:"user_id"`
	Role   string                      `json:"role"`
	Plan   string                      `json:"plan"`
	Usage  map[string]quota.LimitUsage `json:"usage"`
}

// me is the caller, their effective plan and the state of every limit.
func (s *Server) me(w http.ResponseWriter, r *http.Request) error {
	p, _ := auth.FromContext(r.Context())
	rep, err := s.quota.Report(r.Context(), p)
	if err != nil {
		return err
	}
	role := p.Role
	if role == "" {
		role = "user"
	}
	httpx.WriteJSON(w, http.StatusOK, meResponse{UserID: p.UserID, Role: role, Plan: rep.Plan, Usage: rep.Usage})
	return nil
}
