package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/database"
)

// Kinds of record.
const (
	KindVoice = "voice"
	KindChat  = "chat"
	// KindCompletion is a POST /v1/chat/completions request.
	KindCompletion = "completion"
	// KindAttempt is a routed attempt that failed but that the provider
	// billed (it reported usage): recorded and priced as what it was,
	// never as a completion (DESIGN §11). Its turn_id is the turn's,
	// followed by "/" and the attempt's number.
	KindAttempt = "attempt"
	// KindJudge is a question the safety filter's judge answered (issue
	// #37): the operator's cost, like an attempt. Its turn_id is the
	// unit's, followed by "/judge/" and the question's number.
	KindJudge = "judge"
	// KindResponse is a POST /v1/responses request (issue #41).
	KindResponse = "response"
)

// validKind says whether kind is one of the kinds above.
func validKind(kind string) bool {
	switch kind {
	case KindVoice, KindChat, KindCompletion, KindAttempt, KindJudge, KindResponse:
		return true
	}
	return false
}

// Usage sources (DESIGN §6): who counted the tokens.
const (
	SourceClientReported   = "client_reported"
	SourceServerObserved   = "server_observed"
	SourceProviderReported = "provider_reported"
	SourceNone             = "none" // nothing was reported: a session ended with no usage
	// SourceUnconfirmed: the provider's final usage never came (a live
	// session's sideband died before session.closed); the record holds
	// the highest figure the gateway saw.
	SourceUnconfirmed = "unconfirmed"
)

// Record is one ledger row: a voice session or a chat turn.
type Record struct {
	ID        int64     `json:"id"`
	UserID    string    `json:"user_id"`
	SessionID string    `json:"session_id"`
	TurnID    string    `json:"turn_id,omitempty"`
	Kind      string    `json:"kind"`
	Mode      string    `json:"mode"` // a voice session's mode; "" for other kinds
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	Usage     Usage     `json:"-"`
	Tokens    TokenView `json:"tokens"`

	TranscriptionModel string `json:"transcription_model,omitempty"`
	Transcription      Usage  `json:"-"`
	// BackendModel and Backend are a live session's delegations: the chat
	// model they ran on and its text tokens (migration 0079), a cost class
	// of their own on the session's record, with its own 12-hour writes
	// and tier (migration 0090).
	BackendModel string `json:"backend_model,omitempty"`
	Backend      Usage  `json:"-"`
	// BackendServiceTier is the tier the backend's responses named
	// (Backend.ServiceTier); "" when they named none.
	BackendServiceTier string `json:"backend_service_tier,omitempty"`

	DurationMS   int64     `json:"duration_ms"`
	OverrunS     int64     `json:"overrun_s"`
	CostMicros   *int64    `json:"cost_micros"` // nil: unpriced
	Cost         string    `json:"cost"`        // dollars to the micro-dollar, or "unpriced"
	Unpriced     bool      `json:"unpriced"`
	PriceVersion string    `json:"price_version"`
	UsageSource  string    `json:"usage_source"`
	CreatedAt    time.Time `json:"created_at"`
	// ServiceTier is the tier the provider named for the record's own
	// model (Usage.ServiceTier); "" when it named none.
	ServiceTier string `json:"service_tier"`
}

// TokenView is the record's counts as the API shows them.
type TokenView struct {
	TextIn               int64 `json:"text_in"`
	TextCachedIn         int64 `json:"text_cached_in"`
	TextOut              int64 `json:"text_out"`
	AudioIn              int64 `json:"audio_in"`
	AudioCachedIn        int64 `json:"audio_cached_in"`
	AudioOut             int64 `json:"audio_out"`
	ImageIn              int64 `json:"image_in"`
	ImageCachedIn        int64 `json:"image_cached_in"`
	TranscriptionTextIn  int64 `json:"transcription_text_in"`
	TranscriptionAudioIn int64 `json:"transcription_audio_in"`
	TranscriptionTextOut int64 `json:"transcription_text_out"`
	TranscriptionAudioMS int64 `json:"transcription_audio_ms"`
	TextCacheWriteIn     int64 `json:"text_cache_write_in"`
	// TextCacheWrite12hIn is the part of TextCacheWriteIn written under
	// a 12-hour TTL (migration 0088).
	TextCacheWrite12hIn int64 `json:"text_cache_write_12h_in"`
	// AudioMS is the model's own time billed by duration: a live
	// session's voice milliseconds.
	AudioMS int64 `json:"audio_ms"`
	// A live session's backend model's tokens.
	BackendTextIn           int64 `json:"backend_text_in"`
	BackendTextCachedIn     int64 `json:"backend_text_cached_in"`
	BackendTextCacheWriteIn int64 `json:"backend_text_cache_write_in"`
	BackendTextOut          int64 `json:"backend_text_out"`
	// BackendTextCacheWrite12hIn is the part of BackendTextCacheWriteIn
	// written under a 12-hour TTL (migration 0090).
	BackendTextCacheWrite12hIn int64 `json:"backend_text_cache_write_12h_in"`
}

// TokenCount is the record's tokens in and out, every model on it
// (Usage.Tokens of each): what the user's day counts toward a token
// quota.
func (r Record) TokenCount() (in, out int64) {
	for _, u := range []Usage{r.Usage, r.Transcription, r.Backend} {
		i, o := u.Tokens()
		in, out = in+i, out+o
	}
	return in, out
}

func (r *Record) fillView() {
	u, t, b := r.Usage, r.Transcription, r.Backend
	r.Tokens = TokenView{u.TextIn, u.TextCachedIn, u.TextOut, u.AudioIn, u.AudioCachedIn, u.AudioOut, u.ImageIn, u.ImageCachedIn,
		t.TextIn, t.AudioIn, t.TextOut, t.AudioMillis, u.TextCacheWriteIn, u.TextCacheWrite12hIn, u.AudioMillis,
		b.TextIn, b.TextCachedIn, b.TextCacheWriteIn, b.TextOut, b.TextCacheWrite12hIn}
	r.ServiceTier, r.BackendServiceTier = u.ServiceTier, b.ServiceTier
	r.Unpriced = r.CostMicros == nil
	r.Cost = UnpricedText
	if r.CostMicros != nil {
		r.Cost = Dollars(*r.CostMicros)
	}
}

// UnpricedText is what finance sees for a record with no cost, in JSON and
// CSV: never 0.
const UnpricedText = "unpriced"

// Dollars writes micro-USD as exact dollars with six decimals.
func Dollars(micros int64) string {
	return fmt.Sprintf("%d.%06d", micros/1_000_000, micros%1_000_000)
}

// LedgerParams are what a Ledger needs.
type LedgerParams struct {
	Pool       *pgxpool.Pool
	Prices     *Prices
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Ledger prices and stores usage records and answers finance's queries.
type Ledger struct {
	pool     *pgxpool.Pool
	prices   *Prices
	log      *slog.Logger
	records  *prometheus.CounterVec
	unpriced *prometheus.CounterVec
	cost     *prometheus.CounterVec
	// unfolded says this replica has written or changed a record since
	// its last fold (fold.go): an idle replica does not fold.
	unfolded atomic.Bool
}

// NewLedger checks p and registers the ledger's metrics.
func NewLedger(p LedgerParams) (*Ledger, error) {
	if p.Pool == nil || p.Prices == nil {
		return nil, errors.New("billing: NewLedger needs Pool and Prices")
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.Registerer == nil {
		p.Registerer = prometheus.NewRegistry()
	}
	l := &Ledger{
		pool: p.Pool, prices: p.Prices, log: p.Logger,
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "billing", Name: "records_total",
			Help: "Usage records written, by kind.",
		}, []string{"kind"}),
		unpriced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "billing", Name: "unpriced_records_total",
			Help: "Usage records stored without a cost because a model or token class has no price.",
		}, []string{"kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "voxgate", Subsystem: "billing", Name: "cost_micros_total",
			Help: "Micro-dollars of the priced usage records written, by kind, at the prices they were written with: its rate is the cost per second (the ledger is the exact figure; a reprice is not counted).",
		}, []string{"kind"}),
	}
	for _, c := range []prometheus.Collector{l.records, l.unpriced, l.cost} {
		if err := p.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("billing: metrics: %w", err)
		}
	}
	return l, nil
}

// Prices is the table the ledger prices with.
func (l *Ledger) Prices() *Prices { return l.prices }

// Querier is what Write needs: the transaction that ends the session or
// turn, so the record and the end commit together.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// lines are the record's models and their usage: its own, its input
// transcription's, and a live session's backend's. One record, one
// rounding over all of them (DESIGN §10).
func (r Record) lines() []Line {
	return []Line{{r.Model, r.Usage}, {r.TranscriptionModel, r.Transcription}, {r.BackendModel, r.Backend}}
}

// price is r's cost with the current table, at the prices valid at its
// created_at (now, for a record being written). A model or token class
// with no price gives a nil cost, logged, never $0; any other failure is
// an error.
func (l *Ledger) price(ctx context.Context, r Record) (*int64, error) {
	cost, err := l.prices.At(r.CreatedAt).Cost(r.lines()...)
	var unpriced *Unpriced
	switch {
	case err == nil:
		return &cost, nil
	case errors.As(err, &unpriced):
		l.log.WarnContext(ctx, "usage record stored unpriced", "kind", r.Kind, "session_id", r.SessionID, "reason", err.Error())
		return nil, nil
	}
	return nil, err
}

func checkRecord(r Record) error {
	switch {
	case !validKind(r.Kind):
		return fmt.Errorf("billing: kind %q", r.Kind)
	case r.UserID == "" || r.SessionID == "" || r.Model == "" || r.Provider == "":
		return errors.New("billing: a record needs user, session, provider and model")
	case !r.Transcription.IsZero() && r.TranscriptionModel == "":
		return errors.New("billing: transcription usage without its model")
	case !r.Backend.IsZero() && r.BackendModel == "":
		return errors.New("billing: backend usage without its model")
	case r.Backend.AudioIn != 0 || r.Backend.AudioOut != 0 || r.Backend.ImageIn != 0 || r.Backend.AudioMillis != 0:
		return errors.New("billing: a backend model's usage is text tokens only")
	case r.Transcription.TextCacheWrite12hIn != 0 || r.Transcription.ServiceTier != "":
		// The ledger keeps a 12-hour write count and a tier for the
		// record's own model (migration 0088) and a live session's
		// backend (migration 0090); a transcription has neither.
		return errors.New("billing: 12-hour cache writes and a service tier are not kept for a transcription")
	case r.DurationMS < 0 || r.OverrunS < 0:
		return fmt.Errorf("%w: negative duration", ErrCount)
	}
	switch r.UsageSource {
	case SourceClientReported, SourceServerObserved, SourceProviderReported, SourceNone, SourceUnconfirmed:
	default:
		return fmt.Errorf("billing: usage source %q", r.UsageSource)
	}
	for _, l := range r.lines() {
		if err := l.Usage.Check(); err != nil {
			return err
		}
	}
	return nil
}

// recordColumns is the column list every read scans with scanRecord.
const recordColumns = `id, user_id, session_id, turn_id, kind, provider, model,
	text_in, text_cached_in, text_out, audio_in, audio_cached_in, audio_out, image_in, image_cached_in,
	transcription_model, transcription_text_in, transcription_audio_in, transcription_text_out, transcription_audio_ms,
	duration_ms, overrun_s, cost_micros, price_version, usage_source, created_at, text_cache_write_in, mode,
	backend_model, backend_text_in, backend_text_cached_in, backend_text_cache_write_in, backend_text_out, audio_ms,
	text_cache_write_12h_in, service_tier, backend_text_cache_write_12h_in, backend_service_tier`

func scanRecord(row pgx.Row) (Record, error) {
	var r Record
	u, t, b := &r.Usage, &r.Transcription, &r.Backend
	err := row.Scan(&r.ID, &r.UserID, &r.SessionID, &r.TurnID, &r.Kind, &r.Provider, &r.Model,
		&u.TextIn, &u.TextCachedIn, &u.TextOut, &u.AudioIn, &u.AudioCachedIn, &u.AudioOut, &u.ImageIn, &u.ImageCachedIn,
		&r.TranscriptionModel, &t.TextIn, &t.AudioIn, &t.TextOut, &t.AudioMillis,
		&r.DurationMS, &r.OverrunS, &r.CostMicros, &r.PriceVersion, &r.UsageSource, &r.CreatedAt, &u.TextCacheWriteIn, &r.Mode,
		&r.BackendModel, &b.TextIn, &b.TextCachedIn, &b.TextCacheWriteIn, &b.TextOut, &u.AudioMillis,
		&u.TextCacheWrite12hIn, &u.ServiceTier, &b.TextCacheWrite12hIn, &b.ServiceTier)
	r.CreatedAt = r.CreatedAt.UTC()
	r.fillView()
	return r, err
}

func (l *Ledger) get(ctx context.Context, q Querier, kind, sessionID, turnID string) (Record, error) {
	r, err := scanRecord(q.QueryRow(ctx, `SELECT `+recordColumns+` FROM usage_records
		WHERE kind = $1 AND session_id = $2 AND turn_id = $3`, kind, sessionID, turnID))
	if err != nil {
		return Record{}, database.Error("billing: read record", err)
	}
	return r, nil
}

// SessionRecord is the record of a voice session, or ok false when it has
// none yet (the session is still running).
func (l *Ledger) SessionRecord(ctx context.Context, q Querier, sessionID string) (Record, bool, error) {
	r, err := l.get(ctx, q, KindVoice, sessionID, "")
	if errors.Is(err, pgx.ErrNoRows) {
		return Record{}, false, nil
	}
	return r, err == nil, err
}

// AttachUsage gives a record stored with no usage (a session the sweeper
// ended before the app reported) the usage that arrived late, re-priced
// with the current table, and its overrun. It happens once: a record that
// already has usage is returned unchanged.
func (l *Ledger) AttachUsage(ctx context.Context, q Querier, r Record) (Record, error) {
	if err := checkRecord(r); err != nil {
		return Record{}, err
	}
	cost, err := l.price(ctx, r)
	if err != nil {
		return Record{}, err
	}
	u, t, b := r.Usage, r.Transcription, r.Backend
	tag, err := q.Exec(ctx, `UPDATE usage_records SET
		text_in = $4, text_cached_in = $5, text_out = $6, audio_in = $7, audio_cached_in = $8, audio_out = $9,
		image_in = $10, image_cached_in = $11, transcription_model = $12, transcription_text_in = $13,
		transcription_audio_in = $14, transcription_text_out = $15, transcription_audio_ms = $16,
		overrun_s = $17, cost_micros = $18, price_version = $19, usage_source = $20, text_cache_write_in = $21,
		backend_model = $22, backend_text_in = $23, backend_text_cached_in = $24, backend_text_cache_write_in = $25,
		backend_text_out = $26, audio_ms = $27, text_cache_write_12h_in = $28, service_tier = $29,
		backend_text_cache_write_12h_in = $30, backend_service_tier = $31
		WHERE kind = $1 AND session_id = $2 AND turn_id = $3 AND usage_source = 'none'`,
		r.Kind, r.SessionID, r.TurnID,
		u.TextIn, u.TextCachedIn, u.TextOut, u.AudioIn, u.AudioCachedIn, u.AudioOut, u.ImageIn, u.ImageCachedIn,
		r.TranscriptionModel, t.TextIn, t.AudioIn, t.TextOut, t.AudioMillis,
		r.OverrunS, cost, l.prices.Version, r.UsageSource, u.TextCacheWriteIn,
		r.BackendModel, b.TextIn, b.TextCachedIn, b.TextCacheWriteIn, b.TextOut, u.AudioMillis,
		u.TextCacheWrite12hIn, u.ServiceTier, b.TextCacheWrite12hIn, b.ServiceTier)
	if err != nil {
		return Record{}, database.Error("billing: attach usage", err)
	}
	if tag.RowsAffected() == 1 {
		l.unfolded.Store(true)
		l.count(r.Kind, cost)
	}
	return l.get(ctx, q, r.Kind, r.SessionID, r.TurnID)
}

// count adds a written record's cost to the cost metric, or the record
// to the unpriced ones.
func (l *Ledger) count(kind string, cost *int64) {
	if cost == nil {
		l.unpriced.WithLabelValues(kind).Inc()
		return
	}
	l.cost.WithLabelValues(kind).Add(float64(*cost))
}
