// Package quota enforces plans, rate windows, concurrency leases, daily
// token/cost/call budgets and monthly voice seconds (DESIGN §9), exactly,
// across any number of replicas: every counter lives in PostgreSQL and every
// check-and-increment is one statement (a PL/pgSQL function, see
// migrations/0010-0018 and 0063) serialised on the user's row, on the
// database's clock.
package quota

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
)

// Lease timing (DESIGN §9).
const (
	LeaseTTL    = 60 * time.Second
	RenewEvery  = 20 * time.Second
	MinVoiceS   = 10          // a voice start with fewer seconds left is refused
	voiceGraceS = 5 * 60      // an unended voice reservation is reclaimed this long after its end
	noCapVoiceS = 4 * 60 * 60 // session cap when a plan sets neither a month nor a session limit
)

// Params are the Service's dependencies.
type Params struct {
	Pool   *pgxpool.Pool
	Config config.Quota
	// Now is a test clock. Nil (production) uses the database's clock, so
	// replicas whose clocks are skewed still agree on windows and expiries.
	Now        func() time.Time
	Registerer prometheus.Registerer // nil: metrics are kept but not exported
	Logger     *slog.Logger          // default slog.Default()
}

// Service is the quota service; it is safe for concurrent use.
type Service struct {
	pool    *pgxpool.Pool
	cfg     config.Quota
	now     func() time.Time // nil: the database's clock
	log     *slog.Logger
	metrics *metrics
	admits  *admitBatcher

	// plans is every plan's limits by name, as JSON for every statement
	// that resolves a plan (quota_limits in migrations/0063).
	plans string

	renewEvery   time.Duration // RenewEvery; tests shorten it
	renewTimeout time.Duration // the bound of one renewal by KeepAlive
	sweepEvery   time.Duration
	sweepTimeout time.Duration // the bound of one Sweep
}

// New checks p and returns a Service. An invalid quota config (an unknown
// default plan, a bad plan name, a limit out of range) is an error here, so
// a misconfigured replica fails at startup.
func New(p Params) (*Service, error) {
	if p.Pool == nil {
		return nil, errors.New("quota: Params.Pool is nil")
	}
	if err := p.Config.Validate(); err != nil {
		return nil, fmt.Errorf("quota: %w", err)
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	m, err := newMetrics(p.Registerer)
	if err != nil {
		return nil, fmt.Errorf("quota: metrics: %w", err)
	}
	s := &Service{
		pool: p.Pool, cfg: p.Config, now: p.Now, log: p.Logger, metrics: m,
		renewEvery: RenewEvery, renewTimeout: RenewEvery,
		sweepEvery: 30 * time.Second, sweepTimeout: 20 * time.Second,
	}
	s.admits = newAdmitBatcher(s)
	if s.plans, err = plansJSON(p.Config.Plans); err != nil {
		return nil, fmt.Errorf("quota: %w", err)
	}
	return s, nil
}

// fallbackPlan is the plan when no user_plans row names a configured plan:
// the JWT claim if it names one, else the default (DESIGN §4).
func (s *Service) fallbackPlan(p auth.Principal) string {
	if _, ok := s.cfg.Plans[p.Plan]; ok && p.Plan != "" {
		return p.Plan
	}
	return s.cfg.DefaultPlan
}

// AllPlans says whether every configured plan passes ok: a check that
// every plan passes needs no look-up of the caller's.
func (s *Service) AllPlans(ok func(config.Plan) bool) bool {
	for _, p := range s.cfg.Plans {
		if !ok(p) {
			return false
		}
	}
	return true
}

// PlanFor resolves p's plan: the user_plans row, then the JWT plan claim,
// then the default plan. Nothing is cached, so an admin's change applies to
// the next request. A row naming a plan this config lacks (say, removed in
// a rollout) is skipped, as the admission functions skip it.
func (s *Service) PlanFor(ctx context.Context, p auth.Principal) (string, config.Plan, error) {
	var row string
	err := s.pool.QueryRow(ctx, `SELECT plan FROM user_plans WHERE user_id = $1`, p.UserID).Scan(&row)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", config.Plan{}, dbError("plan", err)
	}
	if plan, ok := s.cfg.Plans[row]; ok && row != "" {
		return row, plan, nil
	}
	name := s.fallbackPlan(p)
	return name, s.cfg.Plans[name], nil
}
