package chat

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/unit"
)

// sink receives a turn's events: a stream sends them, a stream:false
// request drops them (its final response carries everything).
type sink interface {
	Send(event string, v any) error
}

type discard struct{}

func (discard) Send(string, any) error { return nil }

// turn is one admitted POST /v1/chat: it owns the quota ticket until it
// settles, whatever happens.
type turn struct {
	s         *Service
	p         auth.Principal
	req       *Request
	ticket    *quota.Ticket
	sessionID string
	fresh     bool      // the session is new: its row is not written yet
	history   []Message // the session's last HistoryMessages messages, oldest first, read with its owner
	turnID    string
	confirm   *pending // the confirmation this request answers
	key       string   // the Idempotency-Key, "" without one
	out       sink
	started   time.Time
	// stamped is the created_at of every record the turn writes, taken
	// once (stamp): its own transaction and its end, spooled or not,
	// send the same key.
	stamped time.Time

	msgs     []llm.Message // what the model sees (context.go)
	nextCall int           // the last call number given (tools.go)

	// Metering: what the model calls used, as the agent loop counted it.
	usage     billing.Usage
	modelName string // the model the provider named last
	// provider and answerModel are the configured provider and the model
	// of the target that answered the turn's last answered call (model.go).
	provider    string
	answerModel string
	calls       int64
	estimated   bool
	traces      unit.Traces // every routed call's trace (unit.Traces)
	degraded    bool        // every target failed: the configured fallback answered

	// The audit row (auditrow.go): whether its pending row is in, and
	// the filters that ran on this turn's text, set by filters.go (admission
	// adds input: decodeChat sanitized the message before it)
	began bool
	ran   []string
	rules []string // ids of the filter rules that fired on it, sorted, set by screen.go

	language string
	answer   messageData
	text     string // the answer: every content delta sent, in order
	pending  bool   // the turn ended waiting for a confirmation

	// The output filters (screen.go): the answer's stream filter, whether
	// its fallback went out, whether its verdict is in ran and rules.
	screen   *safety.Filter
	judge    *judge.Judge // the filter's judge, nil without one (unit/judge.go)
	fellBack bool
	judged   bool
}

// chat runs one POST /v1/chat in the order of DESIGN §7's flow (its steps
// 1–2, auth and the body, are the handler's) and returns the final
// response as JSON. Its events go to out; the first is session, and until
// then a failure is the request's answer. A retried request whose key has
// a stored answer replays it instead.
func (s *Service) chat(ctx context.Context, p auth.Principal, req *Request, key string, out sink) (raw []byte, err error) {
	if key != "" {
		stored, claimErr := s.claimKey(ctx, p.UserID, key, req.fingerprint())
		if claimErr != nil {
			return nil, claimErr
		}
		if stored != nil {
			return replay(out, stored)
		}
		defer func() {
			if err != nil && !errors.Is(err, quota.ErrKeyInUse) {
				s.dropKey(ctx, p.UserID, key)
			}
		}()
	}
	t, err := s.admit(ctx, p, req, key) // §7.3–7.4 the session's owner, then admission (keyed): refusals before it count nothing
	if err != nil {
		return nil, err
	}
	if err := t.useConfirmation(ctx); err != nil { // §7.4 a confirmation's one use
		return nil, t.release(ctx, err)
	}
	t.key, t.out = key, out
	ctx, cancel := context.WithTimeout(ctx, s.cfg.TurnTimeout)
	defer cancel()
	return t.run(ctx)
}

// run takes the admitted turn to its end and settles its ticket whatever
// happens: an answer, a failure, the client leaving, a shutdown or a
// panic.
func (t *turn) run(ctx context.Context) (raw []byte, err error) {
	defer t.s.env.Spool.Hold()() // shutdown waits for the turn's end to be handed over
	defer t.ticket.KeepAlive(ctx)()
	defer func() {
		if p := recover(); p != nil {
			err = t.fail(ctx, apierr.Wrap(apierr.Internal, "", fmt.Errorf("chat: turn panicked: %v\n%s", p, debug.Stack())))
		}
	}()
	if err := t.out.Send("session", map[string]string{"session_id": t.sessionID}); err != nil {
		return nil, t.fail(ctx, err)
	}
	t.context(ctx)        // §7.5 what the model sees
	if t.confirm != nil { // the call a confirmation answers runs, or is denied
		if err := t.confirmed(ctx); err != nil {
			return nil, t.fail(ctx, err)
		}
	}
	if err := t.model(ctx); err != nil { // §7.6–7 the model with the tool list, and the tools
		return nil, t.fail(ctx, err)
	}
	resp, err := t.filter() // §7.8 the safety filters make the answer
	if err != nil {
		return nil, t.fail(ctx, err)
	}
	if err := t.s.schema.validate(resp); err != nil { // §7.9 validated against its schema
		return nil, t.fail(ctx, err)
	}
	rec, d, err := t.persist(ctx, resp) // §7.10–11 both messages, the cost record, the audit row and the settlement: one transaction
	if err != nil {
		return nil, t.fail(ctx, err)
	}
	return t.settle(ctx, resp, rec, d) // the response's usage block, kept under its key
}
