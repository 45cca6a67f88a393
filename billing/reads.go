package billing

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/internal/database"
)

// Finance answers finance's reads: the record listing and detail, the
// summaries, the exports with their manifests and the reconciliation. It
// reads from its own pool, database.read_url's server (a streaming standby
// as a rule) when one is configured, else the primary's: these reads are
// heavy, may be a few seconds behind, and say how far with Freshness.
// Nothing that must be exact now goes through it (admission, quotas,
// settlement, idempotency, writing or repricing records): those use the
// Ledger and the primary (docs/billing.md, "Finance on a replica").
type Finance struct {
	pool   *pgxpool.Pool
	prices *Prices
}

// NewFinance is l's finance reads from read; nil reads l's own pool, the
// primary.
func NewFinance(l *Ledger, read *pgxpool.Pool) *Finance {
	if read == nil {
		read = l.pool
	}
	return &Finance{pool: read, prices: l.prices}
}

// Where a finance answer was read.
const (
	ReadFromPrimary = "primary"
	ReadFromStandby = "standby"
)

// Freshness says how current a finance answer is; every finance response
// carries it.
type Freshness struct {
	// AsOf is the time up to which the answer is complete: every record
	// committed before it is in it (later ones may be too). On the
	// primary it is the time of the read; on a standby, the point its
	// replay has reached (database.ReadPosition).
	AsOf time.Time `json:"as_of"`
	// LagMS is how far AsOf is behind the server's clock at the read, in
	// milliseconds: 0 on the primary.
	LagMS int64 `json:"lag_ms"`
	// ReadFrom is "primary" or "standby".
	ReadFrom string `json:"read_from"`
}

// read runs fn on one connection of the read pool, after reading that
// server's position on it, so that what fn reads is complete up to the
// Freshness it is given. One connection, because a multi-host read_url
// may put two on different standbys. The connection is released when fn
// returns: fn must not call a provider.
func (fi *Finance) read(ctx context.Context, fn func(c *pgxpool.Conn, fr Freshness) error) error {
	c, err := fi.pool.Acquire(ctx)
	if err != nil {
		return database.Error("billing: finance read", err)
	}
	defer c.Release()
	p, err := database.ReadPosition(ctx, c)
	if err != nil {
		return err
	}
	fr := Freshness{AsOf: p.AsOf, LagMS: p.Lag.Milliseconds(), ReadFrom: ReadFromPrimary}
	if p.Standby {
		fr.ReadFrom = ReadFromStandby
	}
	return fn(c, fr)
}

// setFreshness sends fr as headers too, for the exports, whose bodies
// (CSV) have no place for it.
func setFreshness(h http.Header, fr Freshness) {
	h.Set("X-Voxgate-As-Of", fr.AsOf.Format(time.RFC3339Nano))
	h.Set("X-Voxgate-Lag-Ms", strconv.FormatInt(fr.LagMS, 10))
	h.Set("X-Voxgate-Read-From", fr.ReadFrom)
}
