package sse

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/heartbeat"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/tools"
)

// Limits of DESIGN §7.
const (
	// MaxIterations bounds the model↔tool loop of one turn.
	MaxIterations = agent.MaxIterations
	// MaxMessageChars bounds a user message after sanitizing.
	MaxMessageChars = safety.MaxMessageChars
	// HistoryMessages is how many earlier messages the model sees.
	HistoryMessages = 10
	// MaxSessionMessages is a session's cap; the oldest are trimmed.
	MaxSessionMessages = 100
	// IdleExpiry ends a session nobody wrote to for this long.
	IdleExpiry = 8 * time.Hour
	// ConfirmationTTL is how long a pending tool call may be confirmed.
	ConfirmationTTL = 15 * time.Minute
	// IdempotencyTTL is how long a key's answer is kept.
	IdempotencyTTL = 24 * time.Hour
	// PingEvery is the keep-alive comment's period.
	PingEvery = 15 * time.Second
)

// checkConfig refuses a chat section that could not serve a turn, naming
// the key.
func checkConfig(c config.Chat, models []string, contextTool string, reg *tools.Registry, prices *billing.Prices) error {
	switch {
	case c.Route == "":
		return errors.New("chat.route must be set")
	case len(models) == 0:
		return fmt.Errorf("chat.route %q has no targets", c.Route)
	case strings.TrimSpace(c.Degraded.Message) == "" || len(c.Degraded.Message) > MaxMessageChars:
		return fmt.Errorf("chat.degraded.message must be 1–%d characters", MaxMessageChars)
	case c.MaxOutputTokens < 0:
		return errors.New("chat.max_output_tokens must not be negative")
	case c.EstimateTokens < 1:
		return errors.New("chat.estimate_tokens must be at least 1")
	case c.TurnTimeout < time.Second:
		return errors.New("chat.turn_timeout must be at least 1s")
	case c.RetentionDays < 0:
		return errors.New("chat.retention_days must not be negative")
	case c.PurgeInterval < time.Second:
		return errors.New("chat.purge_interval must be at least 1s")
	}
	for i, sg := range c.Degraded.Suggestions {
		if sg.Label == "" || sg.Message == "" {
			return fmt.Errorf("chat.degraded.suggestions[%d] needs a label and a message", i)
		}
	}
	if err := prices.Require(models...); err != nil {
		return fmt.Errorf("chat.route %q: %w", c.Route, err)
	}
	for _, m := range models {
		if c.ReasoningEffort != "" && c.ReasoningEffort != "none" && llm.ToolsNeedNoReasoning(m) {
			return fmt.Errorf("chat.reasoning_effort: %s takes tools only at \"none\", not %q", m, c.ReasoningEffort)
		}
	}
	if contextTool != "" {
		if err := reg.CheckContextTool(contextTool); err != nil {
			return fmt.Errorf("voice.context_tool: %w", err)
		}
	}
	return nil
}

// Params are what a Service needs. New checks them.
type Params struct {
	Pool  *pgxpool.Pool
	Quota *quota.Service
	Tools *tools.Executor
	// Provider is the router: every model call asks it for chat.route
	// (Config.Route).
	Provider llm.Provider
	// RouteModels are the models of chat.route's targets: each needs a
	// price, and a turn's reservation prices at the dearest.
	RouteModels []string
	Ledger      *billing.Ledger
	// Spool is the durable path of turns' ends (records and settlements);
	// nil keeps none, so an outage's ends are retried, then logged.
	Spool *spool.Spool
	// Config is the chat section of the config file, as it is; New checks
	// it and refuses a model with no price. Its provider timeouts are the
	// provider's business, not the service's.
	Config config.Chat
	// ContextTool is the registered tool, with no required parameters,
	// whose result is the user's profile (config.Config.ContextTool, which
	// voice shares); "" means none.
	ContextTool string
	// SafetyIDs make the salted user hash the provider sees as its safety
	// identifier; the zero value sends none.
	SafetyIDs safety.Identifiers
	// Judge is the safety filter's optional judge (config safety.judge);
	// the zero value asks none.
	Judge judge.Config
	// Registerer receives the voxgate_chat_* metrics; nil keeps them
	// unexported (tests).
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Service runs chat turns and serves /v1/chat/*. It is safe for concurrent
// use, and any number of replicas may share one database: a turn holds no
// state outside its request and PostgreSQL.
type Service struct {
	pool     *pgxpool.Pool
	quota    *quota.Service
	tools    *tools.Executor
	provider llm.Provider
	models   []string // Params.RouteModels
	ledger   *billing.Ledger
	audit    *audit.Log
	spool    *spool.Spool
	cfg      config.Chat
	log      *slog.Logger
	metrics  *metrics

	safetyID    safety.Identifiers // the provider's view of a user
	judge       judge.Config       // Params.Judge
	contextTool string             // Params.ContextTool
	schema      *responseSchema
	// pingEvery is PingEvery; tests shorten it.
	pingEvery time.Duration
	// unfiltered turns the chat turn's output filter off, for the one
	// benchmark that measures what holding a sentence back costs; nothing
	// else sets it.
	unfiltered atomic.Bool
	// created is when the service started: the created time of the
	// routes GET /v1/models lists.
	created int64
}

// New checks p and builds the service. A model with no price stops it.
func New(p Params) (*Service, error) {
	if p.Pool == nil || p.Quota == nil || p.Tools == nil || p.Provider == nil || p.Ledger == nil {
		return nil, errors.New("sse: Pool, Quota, Tools, Provider and Ledger are required")
	}
	if err := checkConfig(p.Config, p.RouteModels, p.ContextTool, p.Tools.Registry(), p.Ledger.Prices()); err != nil {
		return nil, err
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.Registerer == nil {
		p.Registerer = prometheus.NewRegistry()
	}
	m, err := newMetrics(p.Registerer)
	if err != nil {
		return nil, err
	}
	schema, err := compileResponseSchema()
	if err != nil {
		return nil, err
	}
	if err := schema.checkDegraded(p.Config.Degraded); err != nil {
		return nil, err
	}
	if p.Spool == nil {
		if p.Spool, err = spool.New(spool.Params{Logger: p.Logger}); err != nil {
			return nil, err
		}
	}
	s := &Service{pool: p.Pool, quota: p.Quota, tools: p.Tools, provider: p.Provider, models: p.RouteModels, ledger: p.Ledger, audit: audit.New(p.Pool), spool: p.Spool, safetyID: p.SafetyIDs, judge: p.Judge,
		cfg: p.Config, contextTool: p.ContextTool, log: p.Logger, metrics: m, schema: schema, pingEvery: PingEvery,
		created: time.Now().Unix()}
	p.Spool.Register(turnEndKind, s.decodeTurnEnd)
	p.Spool.Register(completionEndKind, s.decodeCompletionEnd)
	return s, nil
}

// Run purges old conversations every PurgeInterval until ctx ends.
func (s *Service) Run(ctx context.Context) {
	heartbeat.Every(ctx, s.cfg.PurgeInterval, func(ctx context.Context) {
		if _, err := s.Purge(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("chat purge failed", "err", err)
		}
	})
}
