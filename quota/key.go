package quota

import (
	"context"
	"errors"
	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/apierr"
)

// Keyed admission (docs/quota.md, "Keyed admission"). An admission can
// commit and its answer be lost, as in a failover; the client retries. A
// request that carries a key (Estimate.Key, the client's Idempotency-Key)
// is then answered with the ticket its first attempt was given, counting
// nothing again, as long as that ticket lives (until it is settled, or its
// lease lapses unrenewed and is reclaimed).
//
// Only a ticket no caller took is handed on. Admit takes a keyed ticket as
// soon as its answer arrives (one more statement, for keyed requests
// only): from then on the key is in use, and another request with it is
// refused with CONFLICT until the ticket ends. So two requests sent at
// once with one key never share a ticket: the later admission hands the
// ticket on, and the earlier attempt's take fails and it stands aside.

// MaxKeyLen bounds an admission key.
const MaxKeyLen = 255

// ErrKeyInUse: a request's admission key names a ticket that another
// attempt with the key holds (its request still runs). The client error
// it travels in is 409 CONFLICT.
var ErrKeyInUse = errors.New("quota: admission key in use")

// reasonKeyInUse is quota_admit_requests' refusal of a key in use (0087).
const reasonKeyInUse = "admit_key_in_use"

// CheckKey refuses an admission key that is not 1–MaxKeyLen printable
// ASCII characters without spaces, with the 400 a client is told: keys
// come from the Idempotency-Key header, and one PostgreSQL refuses (a NUL)
// would fail the whole batch it travels in.
func CheckKey(k string) error {
	if len(k) == 0 || len(k) > MaxKeyLen {
		return apierr.Errorf(apierr.InvalidRequest, "Idempotency-Key must be 1–%d characters.", MaxKeyLen)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return apierr.New(apierr.InvalidRequest, "Idempotency-Key must be printable ASCII without spaces.")
		}
	}
	return nil
}

// RequestKey is r's optional Idempotency-Key header as an admission key:
// "" without one, the client's 400 when CheckKey refuses it. The endpoints
// that key their admission with the header read it here.
func RequestKey(r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return "", nil
	}
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return key, nil
}

func errKeyInUse() error {
	return apierr.Wrap(apierr.Conflict, "A request with this Idempotency-Key is still running.", ErrKeyInUse)
}

// take marks c's keyed ticket as got by its caller, unless a later
// admission with the key has handed it on: then c's caller must not use
// it (the later attempt settles it), and c's riders' pending rows are
// closed as an abandoned admission's are.
func (s *Service) take(ctx context.Context, c *admitCall) error {
	// Not bounded by the caller's context, as the batch statement is not:
	// a caller gone between the answer and the take must not leave a
	// ticket half admitted; the caller's code releases it as any other.
	tctx, cancel := detach(ctx, admitTimeout)
	defer cancel()
	var took bool
	err := s.pool.QueryRow(tctx, `SELECT quota_take_ticket($1, $2, $3)`, c.userID, c.ticketID, c.gen).Scan(&took)
	if err != nil {
		// The take may have committed: a retry is then refused while the
		// lease lives, else answered with the ticket.
		return dbError("take a keyed ticket", err)
	}
	if took {
		return nil
	}
	var b pgx.Batch
	for _, r := range c.riders {
		if r.Abandoned != nil {
			r.Abandoned(&b)
		}
	}
	if b.Len() > 0 {
		if err := s.pool.SendBatch(tctx, &b).Close(); err != nil {
			s.log.WarnContext(ctx, "quota: closing the riders of a ticket handed on failed", "user_id", c.userID, "err", err)
		}
	}
	return errKeyInUse()
}

// KeyAwaitsRetry reports whether key names a live ticket of userID that
// no caller took: an admission with the key committed and its answer
// never reached its caller, so Admit with the key will be answered with
// that ticket. An endpoint that refuses a retry while its first attempt
// runs (chat's idempotency claim) asks it to tell that attempt's lost
// admission from one still running.
func (s *Service) KeyAwaitsRetry(ctx context.Context, userID, key string) (bool, error) {
	if err := CheckKey(key); err != nil {
		return false, err
	}
	var waiting bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM quota_clock($3) c, quota_tickets t
		WHERE t.user_id = $1 AND t.admit_key = $2 AND NOT t.admit_taken AND t.expires_at > c.now)`,
		userID, key, s.clockArg()).Scan(&waiting)
	if err != nil {
		return false, dbError("look up an admission key", err)
	}
	return waiting, nil
}

// takeVoice is take for a keyed voice start's reservation.
func (s *Service) takeVoice(ctx context.Context, r *VoiceReservation, gen *int32) error {
	if gen == nil {
		return apierr.Wrap(apierr.Internal, "", errors.New("quota: a keyed voice reservation without its generation"))
	}
	tctx, cancel := detach(ctx, admitTimeout)
	defer cancel()
	var took bool
	err := s.pool.QueryRow(tctx, `SELECT quota_take_voice($1, $2, $3)`, r.UserID, r.SessionID, *gen).Scan(&took)
	if err != nil {
		return dbError("take a keyed voice reservation", err)
	}
	if !took {
		return errKeyInUse()
	}
	return nil
}
