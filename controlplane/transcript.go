package controlplane

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/safety"
)

// PIILeak is the flag type of personal data heard in a voice answer.
const PIILeak = "pii_leak"

// screenTranscript runs a finished output transcript of a sideband call
// through the detectors (screenSpoken).
func (c *call) screenTranscript(ctx context.Context, part, transcript string) {
	c.s.screenSpoken(ctx, c.id, c.userID, c.language, part, transcript)
}

// screenSpoken runs a finished output transcript through the medical
// claim and PII detectors (DESIGN §12). Spoken audio cannot be recalled,
// so a hit is recorded after the fact: a flag on the session (shown by GET
// /v1/voice/sessions/{id}), a metric, an audit row (kind voice_answer,
// status flagged, the rule ids and the transcript's hash) and a log line
// with the rule ids, never the text. part names the answer within the
// session (a sideband's item id and content index, a live line's start),
// so a transcript seen twice makes one row. It is read in the session's
// language, else in each sentence's own. Prescriptive tone is not flagged
// on voice.
func (s *Service) screenSpoken(ctx context.Context, sessionID, userID, language, part, transcript string) {
	v := safety.CheckText(transcript, safety.Options{Language: language})
	var f safety.Flag
	switch v.Outcome {
	case safety.Blocked:
		f = safety.Flag{Type: safety.MedicalClaim, Message: "The assistant said something that reads as medical advice."}
	case safety.Leak:
		f = safety.Flag{Type: PIILeak, Message: "The assistant said something that holds personal data."}
	default:
		return
	}
	s.log.WarnContext(ctx, "voice: a spoken answer was flagged", "session_id", sessionID, "flag", f.Type, "rules", v.Rules)
	s.flagSession(ctx, sessionID, f)
	// The answer was spoken before it could be checked: its row has no
	// pending stage, and Finish inserts it final at once.
	r := audit.Row{ID: sessionID + "/answer/" + part, Kind: audit.KindVoiceAnswer, UserID: userID, SessionID: sessionID,
		Status: audit.Flagged, FiltersRan: []string{audit.FilterMedical, audit.FilterPII}, RuleIDs: v.Rules,
		OutputHash: audit.Hash(transcript)}
	if err := s.audit.Finish(ctx, r); err != nil && !errors.Is(err, audit.ErrFinal) {
		s.log.ErrorContext(ctx, "voice: a flagged answer's audit row was not written", "session_id", sessionID,
			"flag", f.Type, "err", err)
	}
}

// flagSession adds a safety flag to the session and counts it.
func (s *Service) flagSession(ctx context.Context, sessionID string, f safety.Flag) {
	s.metrics.transcriptFlags.WithLabelValues(f.Type).Inc()
	raw, _ := json.Marshal([]safety.Flag{f})
	if _, err := s.pool.Exec(ctx, `UPDATE voice_sessions SET safety_flags = safety_flags || $2::jsonb WHERE id = $1`, sessionID, raw); err != nil {
		s.log.ErrorContext(ctx, "voice: a safety flag was not stored", "session_id", sessionID, "flag", f.Type,
			"err", database.Error("controlplane: flag a session", err))
	}
}
