package server

import (
	"net/http"
	"slices"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
)

// authenticate verifies the bearer token and, when roles is non-nil,
// requires one of them. It makes no database query.
func (s *Server) authenticate(h httpx.HandlerFunc, roles []string) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, err := s.verifier.VerifyHeader(r.Context(), r.Header.Get("Authorization"))
		if err != nil {
			if s.metrics != nil {
				s.metrics.authFailures.Inc()
			}
			return err
		}
		if roles != nil && !slices.Contains(roles, p.Role) {
			return apierr.New(apierr.Forbidden, "")
		}
		ctx := auth.WithPrincipal(r.Context(), p)
		if lw, ok := w.(*statusWriter); ok {
			lw.userID = p.UserID
		}
		return h(w, r.WithContext(ctx))
	}
}

// aiEnabled refuses every AI route while VOXGATE_AI_ENABLED=false.
func (s *Server) aiEnabled(h httpx.HandlerFunc) httpx.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !s.cfg.AIEnabled {
			return apierr.New(apierr.AIFeatureDisabled, "").WithRetry(60)
		}
		return h(w, r)
	}
}
