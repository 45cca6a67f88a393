package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/unit"
)

// recordTimeout bounds the one try at storing and ending an answered turn,
// which runs on after the request's context is gone (a client that left
// still used what it used) but not past a shutdown's deadline
// (spool.Detach).
const recordTimeout = 10 * time.Second

// persist stores the answered turn and ends it in one transaction, one
// round trip (issue 36; unit.End with First): both messages with their
// structured data (and a fresh session's row), then what every end writes
// (its cost record, the attempts a provider billed, the final audit
// row, the ticket's settlement). It returns the record as the ledger
// priced it and the user's day after it.
//
// It is tried once, here, and never spooled: messages replayed after an
// outage could land after a later turn's, so a turn whose messages were
// not stored fails instead, and that end (fail) goes through the durable
// path without them, under the same record key (stamp).
func (t *turn) persist(ctx context.Context, resp *Response) (billing.Record, quota.Daily, error) {
	wctx, cancel := t.s.env.Spool.Detach(ctx, recordTimeout)
	defer cancel()
	st := storedTurn{sessionID: t.sessionID, userID: t.p.UserID, turnID: t.turnID,
		userText: t.req.Message, userData: messageData{Confirm: t.req.Confirm},
		answerID: resp.MessageID, answer: resp.Message, answerData: t.answer}
	rec := t.record()
	j := t.endJob(&rec, t.auditRow(t.answeredStatus(resp), "", resp.Message))
	j.first = func(b *pgx.Batch) error { return queueTurn(b, st, t.fresh) }
	if err := j.Complete(wctx); err != nil {
		return billing.Record{}, quota.Daily{}, err
	}
	return j.rec, j.daily, nil
}

// record is the turn's cost record, priced by the ledger. It names the
// target that answered (the last answered call's). A turn no target
// answered (degraded, or refused by every one) used nothing billable
// itself: it names provider "none" and the route's first model, whose
// price keeps its zero cost a priced zero.
func (t *turn) record() billing.Record {
	model, provider := t.modelName, t.provider
	if model == "" {
		model = t.answerModel
	}
	if provider == "" {
		provider, model = noProvider, t.s.models[0]
	}
	source := billing.SourceProviderReported
	if t.estimated {
		source = billing.SourceServerObserved
	}
	return billing.Record{UserID: t.p.UserID, SessionID: t.sessionID, TurnID: t.turnID, Kind: billing.KindChat,
		Provider: provider, Model: model, Usage: t.usage,
		DurationMS: time.Since(t.started).Milliseconds(), UsageSource: source, CreatedAt: t.stamp()}
}

// stamp is the created_at of the turn's records (billing.Stamp), taken the
// first time a record is made: persist's record and the one a failed
// persist hands to the durable end carry one key, so a transaction whose
// commit was lost and its replay never write two.
func (t *turn) stamp() time.Time {
	if t.stamped.IsZero() {
		t.stamped = billing.Stamp()
	}
	return t.stamped
}

// noProvider names the provider of a turn no target answered.
const noProvider = "none"

// storedTurn is what a finished turn writes.
type storedTurn struct {
	sessionID, userID, turnID string
	userText                  string
	userData                  messageData
	answerID, answer          string
	answerData                messageData
}

// saveMessagesSQL writes a turn's two messages, in order, if its session
// still exists: the user may delete the conversation while the turn runs,
// and then the turn stores nothing of it (its answer is still delivered and
// its usage recorded). The key-share lock holds a delete that comes after
// this statement until the transaction ends; one that came before leaves
// no row to insert under.
const saveMessagesSQL = `WITH s AS (SELECT id FROM chat_sessions WHERE id = $2 FOR KEY SHARE)
	INSERT INTO chat_messages (id, session_id, user_id, turn_id, role, content, data)
	SELECT m.id, s.id, $3, $4, m.role, m.content, m.data
	FROM s, (VALUES (1, $1::text, 'user', $5::text, $6::jsonb), (2, $7, 'assistant', $8, $9)) AS m (ord, id, role, content, data)
	ORDER BY m.ord`

// queueTurn queues on b the writes of both messages (creating a fresh
// session), marking the session active and trimming it to
// MaxSessionMessages.
func queueTurn(b *pgx.Batch, t storedTurn, fresh bool) error {
	ud, err := json.Marshal(t.userData)
	if err != nil {
		return err
	}
	ad, err := json.Marshal(t.answerData)
	if err != nil {
		return err
	}
	if fresh {
		// A new session is written with its first two messages counted: no
		// trim to make, and no second version of its row (issue 36).
		b.Queue(freshSessionSQL, t.sessionID, t.userID)
		b.Queue(saveMessagesSQL, unit.NewID("msg_"), t.sessionID, t.userID, t.turnID, t.userText, ud, t.answerID, t.answer, ad)
		return nil
	}
	b.Queue(saveMessagesSQL, unit.NewID("msg_"), t.sessionID, t.userID, t.turnID, t.userText, ud, t.answerID, t.answer, ad)
	b.Queue(`WITH cut AS (
			DELETE FROM chat_messages WHERE session_id = $1 AND seq <= (
				SELECT seq FROM chat_messages WHERE session_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT 1)
			RETURNING 1)
		UPDATE chat_sessions SET last_active_at = now(),
			message_count = message_count + 2 - (SELECT count(*) FROM cut)
		WHERE id = $1`, t.sessionID, MaxSessionMessages)
	return nil
}

// freshSessionSQL writes a new session's row with its first turn's two
// messages counted. The id is the server's own, and a turn that wrote the
// row earlier (a pending confirmation's, tools.go) is no longer fresh, so a
// conflict can only be this turn's own earlier write: its count goes up by
// the two, as the existing session's update would make it.
const freshSessionSQL = `INSERT INTO chat_sessions AS s (id, user_id, message_count) VALUES ($1, $2, 2)
	ON CONFLICT (id) DO UPDATE SET message_count = s.message_count + 2, last_active_at = now()
	WHERE s.user_id = EXCLUDED.user_id`
