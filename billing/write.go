package billing

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/voxgate/voxgate/internal/database"
)

const insertSQL = `INSERT INTO usage_records
	(user_id, session_id, turn_id, kind, provider, model,
	 text_in, text_cached_in, text_out, audio_in, audio_cached_in, audio_out, image_in, image_cached_in,
	 transcription_model, transcription_text_in, transcription_audio_in, transcription_text_out, transcription_audio_ms,
	 duration_ms, overrun_s, cost_micros, price_version, usage_source, text_cache_write_in,
	 backend_model, backend_text_in, backend_text_cached_in, backend_text_cache_write_in, backend_text_out, audio_ms,
	 text_cache_write_12h_in, service_tier, backend_text_cache_write_12h_in, backend_service_tier, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25,
	$26, $27, $28, $29, $30, $31, $32, $33, $34, $35, coalesce($36::timestamptz, now()))
ON CONFLICT ON CONSTRAINT usage_records_one_per_turn DO NOTHING
RETURNING id, created_at, mode`

// Write prices r and inserts it with q. A record for the same session (and
// turn) already written is not written again: Write returns the stored one,
// so a retried end never bills twice. An unpriced record is stored with a
// nil cost and counted, never as $0.
//
// The record's key is (kind, session_id, turn_id, created_at), the ledger
// being partitioned by created_at (migration 0092): a writer that may try
// again stamps r.CreatedAt once, before its first try (Stamp), and sends
// the same stamp every time. A record with no stamp takes the database's
// clock, which only a writer that never retries may rely on.
func (l *Ledger) Write(ctx context.Context, q Querier, r Record) (Record, error) {
	w, args, err := l.prepare(ctx, r)
	if err != nil {
		return Record{}, err
	}
	w.scan(q.QueryRow(ctx, insertSQL, args...))
	return w.Record(ctx, q)
}

// Queued is a record queued on a batch by QueueWrite: its insert runs when
// the batch is sent, in the batch's transaction.
type Queued struct {
	l      *Ledger
	r      Record
	stored bool // the record was written before: Record reads it
	err    error
}

// QueueWrite prices r and queues its insert on b, so that a unit's records,
// its audit row and its settlement reach PostgreSQL in one round trip and
// commit together (pgx sends a batch as one implicit transaction). Once b
// is sent, Record gives what Write would have.
func (l *Ledger) QueueWrite(ctx context.Context, b *pgx.Batch, r Record) (*Queued, error) {
	w, args, err := l.prepare(ctx, r)
	if err != nil {
		return nil, err
	}
	b.Queue(insertSQL, args...).QueryRow(func(row pgx.Row) error {
		w.scan(row)
		return nil
	})
	return w, nil
}

// prepare checks and prices r and gives the insert's arguments.
func (l *Ledger) prepare(ctx context.Context, r Record) (*Queued, []any, error) {
	if err := checkRecord(r); err != nil {
		return nil, nil, err
	}
	var err error
	if r.CostMicros, err = l.price(ctx, r); err != nil {
		return nil, nil, err
	}
	r.PriceVersion = l.prices.Version
	u, t, b := r.Usage, r.Transcription, r.Backend
	args := []any{r.UserID, r.SessionID, r.TurnID, r.Kind, r.Provider, r.Model,
		u.TextIn, u.TextCachedIn, u.TextOut, u.AudioIn, u.AudioCachedIn, u.AudioOut, u.ImageIn, u.ImageCachedIn,
		r.TranscriptionModel, t.TextIn, t.AudioIn, t.TextOut, t.AudioMillis,
		r.DurationMS, r.OverrunS, r.CostMicros, r.PriceVersion, r.UsageSource, u.TextCacheWriteIn,
		r.BackendModel, b.TextIn, b.TextCachedIn, b.TextCacheWriteIn, b.TextOut, u.AudioMillis,
		u.TextCacheWrite12hIn, u.ServiceTier, b.TextCacheWrite12hIn, b.ServiceTier, nil}
	if !r.CreatedAt.IsZero() {
		args[len(args)-1] = r.CreatedAt
	}
	return &Queued{l: l, r: r}, args, nil
}

// Stamp is a record's created_at taken now, to the microsecond PostgreSQL
// keeps, so the stamp a writer holds is the one stored and every retry
// sends the key the first try wrote.
func Stamp() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func (w *Queued) scan(row pgx.Row) {
	err := row.Scan(&w.r.ID, &w.r.CreatedAt, &w.r.Mode)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		w.stored = true
	case err != nil:
		w.err = database.Error("billing: write record", err)
	}
}

// Record is the record as written, or the one stored before it (read with
// q), once its statement has run and its transaction committed.
func (w *Queued) Record(ctx context.Context, q Querier) (Record, error) {
	if w.err != nil {
		return Record{}, w.err
	}
	if w.stored {
		return w.l.get(ctx, q, w.r.Kind, w.r.SessionID, w.r.TurnID)
	}
	l, r := w.l, w.r
	l.unfolded.Store(true)
	l.records.WithLabelValues(r.Kind).Inc()
	l.count(r.Kind, r.CostMicros)
	r.fillView()
	return r, nil
}

// Cost is the queued record's cost as priced now: the settlement's figure,
// which must be queued before the batch runs. A record stored before
// (a replayed end) was settled in the same transaction that stored it.
func (w *Queued) Cost() *int64 { return w.r.CostMicros }
