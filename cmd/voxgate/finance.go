package main

import (
	"context"
	"time"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/database"
)

// newFinance is the finance routes' reads: on database.read_url's server
// when it is set (docs/operations.md, "Finance on a replica"), else on the
// primary. Nothing else is given the read pool: admission, quotas,
// settlement and idempotency stay on m.Pool.
func newFinance(ctx context.Context, m *Main) (*billing.Finance, error) {
	u := m.Config.Database.ReadURL
	if u == "" {
		return billing.NewFinance(m.Ledger, nil), nil
	}
	// Finance's reads are few and long: a quarter of the primary's pool
	// size, at least 2, is plenty and leaves the standby's connections to
	// other readers.
	pool, err := database.OpenRead(ctx, u, max(2, m.Config.Database.MaxConns/4))
	if err != nil {
		return nil, err
	}
	m.ReadPool = pool
	// A read server that is down does not stop the gateway: finance
	// answers 503 until it is back, and admission never needs it.
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		m.Logger.Warn("database.read_url does not answer yet; finance reads will fail until it does", "err", err)
	}
	return billing.NewFinance(m.Ledger, pool), nil
}

// cliFinance is newFinance for `voxgate costs export` and `reconcile`,
// which read as the finance routes do; closeRead closes its read pool.
func cliFinance(ctx context.Context, cfg *config.Config, ledger *billing.Ledger) (fin *billing.Finance, closeRead func(), err error) {
	if cfg.Database.ReadURL == "" {
		return billing.NewFinance(ledger, nil), func() {}, nil
	}
	pool, err := database.OpenRead(ctx, cfg.Database.ReadURL, 2)
	if err != nil {
		return nil, nil, err
	}
	return billing.NewFinance(ledger, pool), pool.Close, nil
}
