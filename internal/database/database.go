package database

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	connectTimeout = 5 * time.Second
	pingTimeout    = 2 * time.Second
)

// Open connects a pool to url and checks that the server answers.
func Open(ctx context.Context, url string, maxConns, minConns int32) (*pgxpool.Pool, error) {
	cfg, err := poolConfig(url, maxConns, minConns)
	if err != nil {
		return nil, err
	}
	dropReadOnly(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: cannot reach %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	return pool, nil
}

// poolConfig is the settings every pool of the gateway shares.
func poolConfig(url string, maxConns, minConns int32) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message can echo the URL, password included; keep it out.
		return nil, fmt.Errorf("database: the database URL is not valid")
	}
	cfg.MaxConns = maxConns
	cfg.MinConns = minConns
	cfg.MaxConnIdleTime = 5 * time.Minute
	// A database that stops answering must not hold callers: connecting
	// gives up after connectTimeout, and the liveness ping of an idle
	// connection at acquire after pingTimeout, even for a caller with no
	// deadline of its own (the URL's connect_timeout and pool_ping_timeout
	// win). Every call's own bound is its context.
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	if cfg.PingTimeout == 0 {
		cfg.PingTimeout = pingTimeout
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["application_name"]; !ok {
		cfg.ConnConfig.RuntimeParams["application_name"] = "voxgate"
	}
	cfg.ConnConfig.Tracer = &counter{}
	return cfg, nil
}
