// Package controlplane runs the voice session lifecycle (DESIGN §6): start
// (quota, credentials, the session row), tool calls on the server, end
// (duration, quota settlement, the cost record) and the sweeper that closes
// sessions nobody ended. Its handlers serve /v1/voice/*.
//
// A session has a mode. In direct mode the app gets a short-lived client
// secret and talks to the provider itself, so whatever it reports is
// advisory. In sideband mode the gateway places the call with the app's
// offer and holds the call's control socket: it runs the tools, observes
// usage and enforces the cap. Relay will carry the media as well.
package controlplane

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/heartbeat"
	"github.com/voxgate/voxgate/internal/randid"
	"github.com/voxgate/voxgate/internal/spool"
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
)

// Config is the voice configuration (the voice section of the config file).
type Config struct {
	// Mode is the default mode of a session that does not ask for one.
	Mode string
	// Provider names the provider on cost records.
	Provider string
	// Model is the Realtime model; it must have a price.
	Model string
	// Voice is the default voice; Voices, when set, are the ones an app may
	// ask for.
	Voice  string
	Voices []string
	// Instructions is the system prompt; the user's profile is appended.
	Instructions string
	// TranscriptionModel turns on input transcription ("" leaves it off).
	TranscriptionModel string
	// ContextTool is a registered tool with no required parameters whose
	// result is the user's profile (DESIGN §7); "" means none.
	ContextTool string
	// SecretTTL is how long a minted client secret opens calls (≤ 60 s).
	SecretTTL time.Duration
	// ToolCallsPerMinute caps one session's tool calls (DESIGN §6: 60).
	ToolCallsPerMinute int
	// SweepInterval is how often each replica looks for expired sessions.
	SweepInterval time.Duration
	// IdleTimeout ends a sideband call whose socket has been silent this
	// long (end_reason idle), charged up to its last event: the phone
	// leaving ends the call without telling the sideband, which stays open.
	IdleTimeout time.Duration
	// VADIdleTimeout is the server VAD idle timeout a sideband call is
	// created with (5 s to 30 s; 0 leaves it off): a connected call whose
	// user is silent produces an event within it, so only a call nobody is
	// on goes quiet for IdleTimeout.
	VADIdleTimeout time.Duration
	// UsageCeilings bound what a direct-mode app may report, per second of
	// its session; beyond them its end is 422.
	UsageCeilings Ceilings
	// AttachWithin is how long the sideband keeps retrying a call the
	// provider does not know yet.
	AttachWithin time.Duration
	// LeaseTTL is how long a replica's hold on its calls outlives its last
	// renewal; LeaseRenew how often it renews (and looks for calls to
	// adopt). A dead holder's calls are adopted within TTL + Renew.
	LeaseTTL, LeaseRenew time.Duration
}

// DefaultConfig is the configuration every field falls back to.
func DefaultConfig() Config {
	return Config{
		// Current models with no announced shutdown (docs/voice.md).
		Mode: ModeDirect, Provider: "openai", Model: "gpt-realtime-2.1", Voice: "marin",
		Instructions: "You are a friendly voice assistant for a food and wellness app. " +
			"Keep answers short and spoken. Use the tools to look things up; never give medical advice.",
		TranscriptionModel: "gpt-live-transcribe",
		SecretTTL:          60 * time.Second, ToolCallsPerMinute: 60, SweepInterval: 15 * time.Second,
		IdleTimeout: 45 * time.Second, VADIdleTimeout: 15 * time.Second, AttachWithin: 5 * time.Second,
		LeaseTTL: 3 * time.Second, LeaseRenew: time.Second, UsageCeilings: DefaultCeilings(),
	}
}

// Params are what a Service needs. New checks them.
type Params struct {
	Pool     *pgxpool.Pool
	Quota    *quota.Service
	Tools    *tools.Executor
	Realtime *realtime.Client
	Ledger   *billing.Ledger
	// Spool is the durable path of session ends; nil keeps none, so an
	// outage's ends are retried, then answered 503.
	Spool  *spool.Spool
	Config Config
	// SafetyIDs make the salted user hash the provider sees as its safety
	// identifier, as chat sends it; the zero value sends none.
	SafetyIDs safety.Identifiers
	// Registerer receives the voxgate_voice_* metrics; nil keeps them
	// unexported (tests).
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Service is the voice control plane. It is safe for concurrent use, and
// any number of replicas may share one database.
type Service struct {
	pool    *pgxpool.Pool
	quota   *quota.Service
	tools   *tools.Executor
	rt      *realtime.Client
	ledger  *billing.Ledger
	spool   *spool.Spool
	cfg     Config
	log     *slog.Logger
	metrics *metrics

	safetyID safety.Identifiers // the provider's view of a user

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
	// Usage observed on held calls, not yet saved (observed.go).
	umu     sync.Mutex
	unsaved map[string]string
}

// New checks p and builds the service. A model with no price stops it.
func New(p Params) (*Service, error) {
	if p.Pool == nil || p.Quota == nil || p.Tools == nil || p.Realtime == nil || p.Ledger == nil {
		return nil, errors.New("controlplane: Pool, Quota, Tools, Realtime and Ledger are required")
	}
	cfg := p.Config
	if err := cfg.check(p.Tools.Registry()); err != nil {
		return nil, err
	}
	if err := p.Ledger.Prices().Require(cfg.Model, cfg.TranscriptionModel); err != nil {
		return nil, err
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.Registerer == nil {
		p.Registerer = prometheus.NewRegistry()
	}
	m, err := newMetrics(p.Registerer, p.Pool)
	if err != nil {
		return nil, err
	}
	if p.Spool == nil {
		if p.Spool, err = spool.New(spool.Params{Logger: p.Logger}); err != nil {
			return nil, err
		}
	}
	life, stop := context.WithCancel(context.Background())
	s := &Service{pool: p.Pool, quota: p.Quota, tools: p.Tools, rt: p.Realtime, ledger: p.Ledger, spool: p.Spool, safetyID: p.SafetyIDs,
		cfg: cfg, log: p.Logger, metrics: m, holders: map[string]*holder{}, life: life, stop: stop,
		replica: randid.New("vr_", 8), unsaved: map[string]string{}}
	p.Spool.Register(sessionEndKind, s.decodeSessionEnd)
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
