package quota

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
)

// SetPlan makes plan the plan of userID from its next request on.
func (s *Service) SetPlan(ctx context.Context, userID, plan string) (time.Time, error) {
	if _, ok := s.cfg.Plans[plan]; !ok || plan == "" {
		return time.Time{}, unknownPlan(plan, s.cfg.PlanNames())
	}
	var at time.Time
	err := s.pool.QueryRow(ctx, `INSERT INTO user_plans (user_id, plan, updated_at)
		SELECT $1, $2, c.now FROM quota_clock($3) c
		ON CONFLICT (user_id) DO UPDATE SET plan = EXCLUDED.plan, updated_at = EXCLUDED.updated_at
		RETURNING updated_at`, userID, plan, s.clockArg()).Scan(&at)
	if err != nil {
		return time.Time{}, dbError("set plan", err)
	}
	return at.UTC(), nil
}

// unknownPlan is 422 VALIDATION_ERROR: well-formed JSON whose value is
// refused, with a message naming the plans there are.
func unknownPlan(plan string, names []string) *apierr.Error {
	return apierr.Wrap(apierr.Validation,
		fmt.Sprintf("Unknown plan %q. Plans: %s.", plan, strings.Join(names, ", ")),
		fmt.Errorf("%w: %q", ErrUnknownPlan, plan))
}

type setPlanBody struct {
	Plan string `json:"plan"`
}

type setPlanReply struct {
	UserID    string    `json:"user_id"`
	Plan      string    `json:"plan"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SetPlanHandler serves PUT /v1/admin/users/{id}/plan with body
// {"plan": "..."}: 200 {user_id, plan, updated_at}. The route table gates
// it to admins; the handler checks the role again, so a wiring mistake
// fails closed (finance and users get 403).
func (s *Service) SetPlanHandler(w http.ResponseWriter, r *http.Request) error {
	p, err := auth.Caller(r.Context())
	if err != nil {
		return err
	}
	if p.Role != auth.RoleAdmin {
		return apierr.New(apierr.Forbidden, "")
	}
	// The id a token's sub may carry, and no other: one no token could
	// name (a control character, bytes that are not UTF-8) is refused here,
	// not stored or sent to PostgreSQL to fail there.
	id := r.PathValue("id")
	if !auth.ValidSubject(id) {
		return apierr.New(apierr.InvalidRequest, "The user id must be 1-256 bytes of UTF-8 text without control characters.")
	}
	var body setPlanBody
	if err := httpx.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Plan == "" {
		return apierr.New(apierr.InvalidRequest, `Field "plan" is required.`)
	}
	at, err := s.SetPlan(r.Context(), id, body.Plan)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, setPlanReply{UserID: id, Plan: body.Plan, UpdatedAt: at})
	return nil
}
