package server

import (
	"context"
	"net/http"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/httpx"
)

// Healthz answers 200 while the process is up.
func (s *Server) Healthz(w http.ResponseWriter, r *http.Request) error {
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// Readyz answers 200 only when this replica should get traffic: not
// draining, the database answers, and its schema is at least ours.
func (s *Server) Readyz(w http.ResponseWriter, r *http.Request) error {
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
