package quota

import (
	"net/http"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
)

// meReply is GET /v1/me (DESIGN §9): the caller, their effective plan and
// the state of every limit of it.
type meReply struct {
	UserID string                `json:"user_id"`
	Role   string                `json:"role"`
	Plan   string                `json:"plan"`
	Usage  map[string]LimitUsage `json:"usage"`
}

// HandleMe serves GET /v1/me to any authenticated caller. A caller without
// a role is reported as "user".
func (s *Service) HandleMe(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	rep, err := s.Report(r.Context(), p)
	if err != nil {
		return err
	}
	role := p.Role
	if role == "" {
		role = "user"
	}
	httpx.WriteJSON(w, http.StatusOK, meReply{UserID: p.UserID, Role: role, Plan: rep.Plan, Usage: rep.Usage})
	return nil
}
