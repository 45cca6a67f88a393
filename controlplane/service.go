// Package controlplane runs the voice session lifecycle (DESIGN §6): start
// (quota, credentials, the session row), tool calls on the server, end
// (duration, quota settlement, the cost record) and the sweeper that closes
// sessions nobody ended. Its handlers serve /v1/voice/*.
//
// A session has a mode. In direct mode the app gets a short-lived client
// secret and talks to the provider itself, so whatever it reports is
// advisory. In sideband mode the gateway places the call with the app's
// offer and holds the call's control socket: it runs the tools, observes
// usage and enforces the cap. In relay mode it is also the phone's WebRTC
// peer and carries the media.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/heartbeat"
	"github.com/voxgate/voxgate/internal/randid"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
)

// Modes of a voice session.
const (
	ModeDirect   = "direct"
	ModeSideband = "sideband"
	ModeRelay    = "relay"
	ModeLive     = "live"
)

// Params are what a Service needs. New checks them.
type Params struct {
	Pool     *pgxpool.Pool
	Quota    *quota.Service
	Tools    *tools.Executor
	Realtime *realtime.Client
	Ledger   *billing.Ledger
	// Spool is the durable path of session ends; nil keeps none, so an
	// outage's ends are retried, then answered 503.
	Spool *spool.Spool
	// Config is the voice section of the config file, as it is; New checks
	// it and refuses a model with no price.
	Config config.Voice
	// ContextTool is the registered tool, with no required parameters,
	// whose result is the user's profile (config.Config.ContextTool, which
	// chat shares); "" means none.
	ContextTool string
	// SafetyIDs make the salted user hash the provider sees as its safety
	// identifier, as chat sends it; the zero value sends none.
	SafetyIDs safety.Identifiers
	// Registerer receives the voxgate_voice_* metrics; nil keeps them
	// unexported (tests).
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// Backend runs live sessions' delegations (the text router, as chat's
	// turns use it) on BackendModel (chat's route). Without it, mode live
	// is refused.
	Backend      llm.Provider
	BackendModel string
	// Clock is the sideband holders' clock; nil is the system's. Tests of
	// the cap move one on instead of waiting out a reservation.
	Clock Clock
	// Relay is the replica's relay network (relay mode); nil refuses relay
	// sessions. The service closes it on Close.
	Relay *realtime.Network
}

// Service is the voice control plane. It is safe for concurrent use, and
// any number of replicas may share one database.
type Service struct {
	pool   *pgxpool.Pool
	quota  *quota.Service
	tools  *tools.Executor
	rt     *realtime.Client
	ledger *billing.Ledger
	audit  *audit.Log
	spool  *spool.Spool
	cfg    config.Voice
	clock  Clock // the holders'
	log    *slog.Logger
	// contextTool is Params.ContextTool; ceilings are the defaults with
	// cfg.UsageCeilings laid over them.
	contextTool string
	ceilings    Ceilings
	metrics     *metrics

	safetyID safety.Identifiers // the provider's view of a user

	// Live delegations' backend, and their loops still running.
	backend      llm.Provider
	backendModel string
	dwg          sync.WaitGroup

	// The sideband calls this replica holds (holder.go). life ends them
	// on Close.
	hmu     sync.Mutex
	holders map[string]*holder
	hwg     sync.WaitGroup
	closing bool
	life    context.Context
	stop    context.CancelFunc
	// replica names this replica on the calls it holds; leasing says Run
	// keeps its lease, so Close hands its calls over.
	replica string
	leasing bool
	leased  atomic.Bool // the lease row exists
	// upkeep is held through each lease upkeep and through the hand-over,
	// so an upkeep that began before Close cannot adopt a call the
	// hand-over has just released (and leave it held by a replica whose
	// lease row is gone, which no other replica would ever adopt).
	upkeep sync.Mutex
	// Usage observed on held calls, not yet saved (observed.go).
	umu     sync.Mutex
	unsaved map[string]string
	// relayNet is Params.Relay; relays are this replica's relayed calls
	// (relay*.go).
	relayNet *realtime.Network
	relays   relayRegistry
}

// New checks p and builds the service. A model with no price stops it.
func New(p Params) (*Service, error) {
	if p.Pool == nil || p.Quota == nil || p.Tools == nil || p.Realtime == nil || p.Ledger == nil {
		return nil, errors.New("controlplane: Pool, Quota, Tools, Realtime and Ledger are required")
	}
	cfg := p.Config
	if err := checkConfig(cfg, p.ContextTool, p.Tools.Registry()); err != nil {
		return nil, err
	}
	if cfg.Mode == ModeLive && p.Backend == nil {
		return nil, errors.New("voice.mode: live needs a chat route for its delegations")
	}
	if cfg.Mode == ModeRelay && p.Relay == nil {
		return nil, errors.New("voice.mode: relay needs the relay network (voice.relay)")
	}
	ceilings, err := usageCeilings(cfg.UsageCeilings)
	if err != nil {
		return nil, err
	}
	if err := p.Ledger.Prices().Require(cfg.Model, cfg.TranscriptionModel); err != nil {
		return nil, err
	}
	// Live is offered when delegations have a backend and the Live model a
	// price; a price table override without it turns live off, logged,
	// unless live is the default mode.
	livePriced := p.Ledger.Prices().Require(cfg.Live.Model)
	if cfg.Mode == ModeLive && livePriced != nil {
		return nil, fmt.Errorf("voice.live.model: %w", livePriced)
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if livePriced != nil && p.Backend != nil {
		p.Logger.Warn("voice: mode live is off: its model has no price", "model", cfg.Live.Model)
		p.Backend = nil
	}
	if p.Registerer == nil {
		p.Registerer = prometheus.NewRegistry()
	}
	m, err := newMetrics(p.Registerer, p.Pool)
	if err != nil {
		return nil, err
	}
	if p.Clock == nil {
		p.Clock = systemClock{}
	}
	if p.Spool == nil {
		if p.Spool, err = spool.New(spool.Params{Logger: p.Logger}); err != nil {
			return nil, err
		}
	}
	life, stop := context.WithCancel(context.Background())
	s := &Service{pool: p.Pool, quota: p.Quota, tools: p.Tools, rt: p.Realtime, ledger: p.Ledger, audit: audit.New(p.Pool), spool: p.Spool, safetyID: p.SafetyIDs,
		cfg: cfg, clock: p.Clock, contextTool: p.ContextTool, ceilings: ceilings, log: p.Logger, metrics: m, holders: map[string]*holder{}, life: life, stop: stop,
		replica: randid.New("vr_", 8), unsaved: map[string]string{}, relayNet: p.Relay, backend: p.Backend, backendModel: p.BackendModel}
	if err := s.relays.register(p.Registerer); err != nil {
		return nil, err
	}
	p.Spool.Register(sessionEndKind, s.decodeSessionEnd)
	p.Spool.Register(sessionEndKindV1, s.decodeSessionEndV1)
	return s, nil
}

// Run keeps this replica's lease on the sideband calls it holds, adopts
// calls whose holder died, and sweeps expired sessions every
// SweepInterval, until ctx ends. Then the calls it holds are let go as a
// crashed replica's would be: another replica adopts them once the lease
// lapses (Close hands them over at once).
func (s *Service) Run(ctx context.Context) {
	s.hmu.Lock()
	s.leasing = true
	s.hmu.Unlock()
	defer s.stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.runLeases(ctx) })
	heartbeat.Every(ctx, s.cfg.SweepInterval, func(ctx context.Context) {
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("voice sweep failed", "err", err)
		}
	})
}
