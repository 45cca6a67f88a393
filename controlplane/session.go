package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/internal/page"
	"github.com/voxgate/voxgate/safety"
)

// Session is a voice session as the API shows it, with its cost record once
// it has ended.
type Session struct {
	ID            string          `json:"session_id"`
	UserID        string          `json:"-"`
	Mode          string          `json:"mode"`
	Plan          string          `json:"plan"`
	Model         string          `json:"model"`
	Voice         string          `json:"voice"`
	Language      string          `json:"language,omitempty"`
	ChatSessionID *string         `json:"chat_session_id"`
	MaxDurationS  int64           `json:"max_duration_s"`
	StartedAt     time.Time       `json:"started_at"`
	ExpiresAt     time.Time       `json:"expires_at"`
	EndedAt       *time.Time      `json:"ended_at"`
	EndReason     *string         `json:"end_reason"`
	DurationMS    *int64          `json:"duration_ms"`
	ChargedS      *int64          `json:"charged_s"`
	Cost          *billing.Record `json:"cost"`
	// SafetyFlags are what the detectors found in the spoken answers,
	// after the fact (transcript.go).
	SafetyFlags []safety.Flag `json:"safety_flags"`

	provider, transcriptionModel string
	// observed is the usage the gateway read off a sideband call so far;
	// nil when it never held one.
	observed *ReportedUsage
	callID   *string
}

// Active reports a session not yet ended.
func (s Session) Active() bool { return s.EndedAt == nil }

const sessionColumns = `id, user_id, mode, plan, provider, model, voice, language, transcription_model, chat_session_id,
	max_duration_s, started_at, expires_at, ended_at, end_reason, duration_ms, charged_s, observed, call_id, safety_flags`

// scanSession reads sessionColumns, then any extra columns into extra.
func scanSession(row pgx.Row, extra ...any) (Session, error) {
	var s Session
	var observed, flags []byte
	err := row.Scan(append([]any{&s.ID, &s.UserID, &s.Mode, &s.Plan, &s.provider, &s.Model, &s.Voice, &s.Language,
		&s.transcriptionModel, &s.ChatSessionID, &s.MaxDurationS, &s.StartedAt, &s.ExpiresAt, &s.EndedAt,
		&s.EndReason, &s.DurationMS, &s.ChargedS, &observed, &s.callID, &flags}, extra...)...)
	if err == nil && observed != nil {
		s.observed = new(ReportedUsage)
		err = json.Unmarshal(observed, s.observed)
	}
	if err == nil {
		err = json.Unmarshal(flags, &s.SafetyFlags)
	}
	return s, err
}

// notFound is the answer for a session that does not exist and for one
// that is another user's: the two must look the same (DESIGN §5).
func notFound(err error) error {
	return apierr.Wrap(apierr.NotFound, "We couldn't find that voice session.", err)
}

// Get returns userID's session id with its cost record.
func (s *Service) Get(ctx context.Context, userID, id string) (Session, error) {
	if !validSessionID(id) {
		return Session{}, notFound(nil)
	}
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionColumns+` FROM voice_sessions
		WHERE id = $1 AND user_id = $2`, id, userID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, notFound(err)
	}
	if err != nil {
		return Session{}, database.Error("controlplane: get session", err)
	}
	return s.withCost(ctx, sess)
}

func (s *Service) withCost(ctx context.Context, sess Session) (Session, error) {
	if sess.Active() {
		return sess, nil
	}
	rec, ok, err := s.ledger.SessionRecord(ctx, s.pool, sess.ID)
	if err != nil {
		return Session{}, err
	}
	if ok {
		sess.Cost = &rec
	}
	return sess, nil
}

// List pages userID's sessions, newest first. Cost records are not
// attached: a page is a list, GET on one session has its record.
func (s *Service) List(ctx context.Context, userID string, p page.Request) (page.List[Session], error) {
	args := []any{userID}
	where := "user_id = $1"
	if !p.After.IsZero() {
		args = append(args, p.After.At, p.After.ID)
		where += " AND (started_at, id) < ($2, $3)"
	}
	args = append(args, p.Limit+1)
	rows, err := s.pool.Query(ctx, `SELECT `+sessionColumns+` FROM voice_sessions WHERE `+where+
		fmt.Sprintf(` ORDER BY started_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return page.List[Session]{}, database.Error("controlplane: list sessions", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Session, error) { return scanSession(r) })
	if err != nil {
		return page.List[Session]{}, database.Error("controlplane: list sessions", err)
	}
	return page.Make(out, p.Limit, func(s Session) page.Key { return page.Key{At: s.StartedAt, ID: s.ID} }), nil
}

// validSessionID accepts the ids Start makes, so a path id that could
// never exist is refused before it reaches the database.
func validSessionID(id string) bool {
	if len(id) != 3+24 || id[:3] != "vs_" {
		return false
	}
	for _, c := range id[3:] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
