package controlplane

import (
	"context"
	"encoding/json"
	"time"

	"github.com/voxgate/voxgate/internal/spool"
)

// sessionEndKind names a voice session's end on the durable path; its
// key names the session's owner as well as the session, so another
// user's end of it, spooled during an outage, is a job of its own (404
// once the database answers) and never takes the owner's place.
const sessionEndKind = "voice_session_end_v2"

// sessionEndKindV1 is the kind ends were spooled as when the key named
// the session alone: files written before an upgrade are still completed.
const sessionEndKindV1 = "voice_session_end"

// sessionEnd is an end's database work (endAt): the seconds settled, the
// session marked ended, its cost record written and the day charged. It
// goes through the durable path (package spool), so a database outage at
// a session's end loses none of it. Every step is idempotent on the
// session (the settlement is remembered, the row lock makes the first end
// win, the record's unique key), so a replay changes nothing.
type sessionEnd struct {
	UserID    string         `json:"user_id"`
	SessionID string         `json:"session_id"`
	Reason    string         `json:"reason"`
	Usage     *ReportedUsage `json:"usage,omitempty"` // what a direct-mode app reported
	ByHolder  bool           `json:"by_holder"`
	// At is when the end happened: a spooled end is charged up to then.
	At time.Time `json:"at"`

	s      *Service
	replay bool // completed from the spool, away from its caller
	v1     bool // spooled as sessionEndKindV1
	// What endAt did.
	sess  Session
	ended bool
}

func (j *sessionEnd) Key() string {
	if j.v1 {
		return "voice_session:" + j.SessionID
	}
	return "voice_session:" + j.UserID + ":" + j.SessionID
}

func (j *sessionEnd) Complete(ctx context.Context) error {
	req := EndRequest{Reason: j.Reason, Usage: j.Usage, byHolder: j.ByHolder}
	sess, ended, err := j.s.endAt(ctx, j.UserID, j.SessionID, req, j.At)
	if err != nil {
		return err
	}
	j.sess, j.ended = sess, ended
	if j.replay && ended && sess.callID != nil {
		// Nobody waits for a replay: the call, if still up, is hung up on
		// the side, with its own bound (hangup's).
		go j.s.hangup(context.Background(), *sess.callID)
	}
	return nil
}

// decodeSessionEnd rebuilds a spooled sessionEnd.
func (s *Service) decodeSessionEnd(raw []byte) (spool.Job, error) { return s.decodeEnd(raw, false) }

// decodeSessionEndV1 rebuilds an end spooled under the older key.
func (s *Service) decodeSessionEndV1(raw []byte) (spool.Job, error) { return s.decodeEnd(raw, true) }

func (s *Service) decodeEnd(raw []byte, v1 bool) (spool.Job, error) {
	j := &sessionEnd{s: s, replay: true, v1: v1}
	if err := json.Unmarshal(raw, j); err != nil {
		return nil, err
	}
	return j, nil
}
