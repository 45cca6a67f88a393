package controlplane

import (
	"context"
	"errors"
	"time"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// toolAudit is a voice tool call's audit row as it began.
type toolAudit struct {
	row     audit.Row
	started time.Time
}

// beginToolAudit inserts the pending audit row of an admitted voice tool
// call, keyed by its session and call id: a retried call keeps its row.
// It holds the hash of the arguments, never the arguments.
func (s *Service) beginToolAudit(ctx context.Context, p auth.Principal, id string, req ToolCallRequest, args []byte) (toolAudit, error) {
	r := audit.Row{ID: audit.VoiceToolID(id, req.CallID), Kind: audit.KindVoiceTool, UserID: p.UserID, SessionID: id,
		CallID: req.CallID, Tool: req.Name, InputHash: audit.Hash(string(args))}
	return toolAudit{row: r, started: time.Now()}, s.audit.Begin(ctx, r)
}

// finishToolAudit moves the call's row to the tool's outcome. A failure
// to write it is logged: the call has run, and its answer stands.
func (s *Service) finishToolAudit(ctx context.Context, a toolAudit, res tools.Result, err error) {
	r := a.row
	r.Status, r.ErrorCode, r.FiltersRan = toolOutcome(res, err)
	r.OutputHash = audit.Hash(res.Output)
	r.DurationMS = time.Since(a.started).Milliseconds()
	if ferr := s.audit.Finish(context.WithoutCancel(ctx), r); ferr != nil && !errors.Is(ferr, audit.ErrFinal) {
		s.log.ErrorContext(ctx, "voice: a tool call's audit row could not be finished", "session_id", r.SessionID,
			"call_id", r.CallID, "err", ferr)
	}
}

// toolOutcome maps a voice tool call's outcome to the audit vocabulary.
// A call the executor ran passed its schema and the write guard (both run
// before any tool body), so those filters ran; a call it refused ran
// neither to the end. A value the guard blocked is a validation error;
// arguments the output filters refused (the call was never made) are
// medical_claim_blocked or pii_leak, as the filters' verdict on an answer
// is; a tool that failed (its error is what the model hears) is degraded.
func toolOutcome(res tools.Result, err error) (audit.Status, string, []string) {
	if err != nil {
		code := apierr.CodeOf(err)
		return audit.ForCode(code), string(code), nil
	}
	ran := []string{audit.FilterArguments, audit.FilterRanges}
	for _, f := range res.SafetyFlags {
		if f.Type == safety.UnsafeValue && f.Blocked {
			return audit.ValidationError, safety.UnsafeValue, ran
		}
	}
	if res.Error != nil && res.Error.Code == tools.UnsafeArguments {
		for _, f := range res.SafetyFlags {
			if f.Type == safety.MedicalClaim && f.Blocked {
				return audit.MedicalClaimBlocked, res.Error.Code, ran
			}
		}
		return audit.PIILeak, res.Error.Code, ran // the screen's other refusal
	}
	if res.Error != nil {
		return audit.Degraded, res.Error.Code, ran
	}
	return audit.Settle(audit.KindVoiceTool, audit.Success, ran), "", ran
}
