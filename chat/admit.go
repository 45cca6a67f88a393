package chat

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/unit"
)

// admit takes the turn's quota ticket. The workflow and a confirmation
// are checked first, then the session's owner, so a refused request
// counts nothing and another user's session is 404 before any effect
// (DESIGN §9); the workflow is checked again against the plan admission
// found. The turn's pending audit row rides the admission (quota.Rider).
func (s *Service) admit(ctx context.Context, p auth.Principal, req *Request, key string) (*turn, error) {
	if req.Workflow != "" {
		if err := s.checkWorkflow(ctx, p, req.Workflow); err != nil {
			return nil, err
		}
	}
	if req.Confirm != nil {
		pp, err := s.peekPending(ctx, p.UserID, req.Confirm.CallID)
		if err != nil {
			return nil, err
		}
		if req.SessionID != "" && req.SessionID != pp.SessionID {
			return nil, errConfirmationGone()
		}
		req.SessionID = pp.SessionID
	}
	sessionID, fresh, hist, err := s.ensureSession(ctx, p.UserID, req.SessionID)
	if err != nil {
		return nil, err
	}
	t := &turn{s: s, p: p, req: req, sessionID: sessionID, fresh: fresh, history: hist, turnID: unit.NewID("turn_"), out: discard{}}
	var refused error
	est := s.reservation()
	est.Key = key // the Idempotency-Key keys the admission: a retry after a lost reply gets its ticket
	ticket, err := s.env.Quota.Admit(ctx, p, est, t.auditRider(&refused))
	if err != nil {
		return nil, err
	}
	t.ticket, t.started, t.began = ticket, time.Now(), refused == nil
	// decodeChat sanitized the message and checked its length (DESIGN §7)
	// before admission: the input filter has run.
	t.ran = append(t.ran, audit.FilterInput)
	if refused != nil {
		return nil, t.release(ctx, refused)
	}
	if req.Workflow != "" {
		// The plan may have changed since checkWorkflow read it.
		if tool, _ := s.tools.Registry().Lookup(req.Workflow); !tool.AllowsPlan(ticket.Plan) {
			return nil, t.release(ctx, errWorkflowNotInPlan())
		}
	}
	return t, nil
}

// reservation is what a turn reserves: chat.estimate_tokens, priced as
// input at the dearest rates of chat.route's targets (any of them may
// answer; an upper bound for most turns; settlement reconciles), and one
// request.
func (s *Service) reservation() quota.Estimate { return s.env.Reserve(s.cfg.EstimateTokens, s.models) }

// reserve is a reservation of tokens, priced as input at the dearest rates
// of models (the targets that may answer), and one request.
func (s *Service) reserve(tokens int64, models []string) quota.Estimate {
	var cost int64
	for _, m := range models {
		c, err := s.env.Ledger.Prices().Cost(billing.Line{Model: m, Usage: billing.Usage{TextIn: tokens}})
		if err == nil {
			cost = max(cost, c)
		}
	}
	return quota.Estimate{Tokens: tokens, CostMicros: cost, Calls: 1}
}

// checkWorkflow refuses a workflow that names no tool, or one the caller's
// plan may not use.
func (s *Service) checkWorkflow(ctx context.Context, p auth.Principal, name string) error {
	tool, ok := s.tools.Registry().Lookup(name)
	if !ok {
		return apierr.New(apierr.ToolNotFound, "")
	}
	plan, _, err := s.env.Quota.PlanFor(ctx, p)
	if err != nil {
		return err
	}
	if !tool.AllowsPlan(plan) {
		return errWorkflowNotInPlan()
	}
	return nil
}
