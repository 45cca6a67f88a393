package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/heartbeat"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/tools"
	"github.com/voxgate/voxgate/unit"
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
	// Env is the replica's, shared with the OpenAI-compatible endpoint:
	// its Provider is the router, which every model call asks for
	// chat.route (Config.Route), and its Spool takes turns' ends.
	Env   *unit.Env
	Tools *tools.Executor
	// RouteModels are the models of chat.route's targets: each needs a
	// price, and a turn's reservation prices at the dearest.
	RouteModels []string
	// Config is the chat section of the config file, as it is; New checks
	// it and refuses a model with no price. Its provider timeouts are the
	// provider's business, not the service's.
	Config config.Chat
	// ContextTool is the registered tool, with no required parameters,
	// whose result is the user's profile (config.Config.ContextTool, which
	// voice shares); "" means none.
	ContextTool string
	// Registerer receives the voxgate_chat_* metrics; nil keeps them
	// unexported (tests).
	Registerer prometheus.Registerer
}

// Service runs chat turns and serves /v1/chat/*. It is safe for concurrent
// use, and any number of replicas may share one database: a turn holds no
// state outside its request and PostgreSQL.
type Service struct {
	env     *unit.Env
	tools   *tools.Executor
	models  []string // Params.RouteModels
	cfg     config.Chat
	metrics *metrics

	contextTool string // Params.ContextTool
	schema      *responseSchema
	// pingEvery is PingEvery; tests shorten it.
	pingEvery time.Duration
	// unfiltered turns the chat turn's output filter off, for the one
	// benchmark that measures what holding a sentence back costs; nothing
	// else sets it.
	unfiltered atomic.Bool
}

// New checks p and builds the service. A model with no price stops it.
func New(p Params) (*Service, error) {
	if p.Env == nil || p.Env.Pool == nil || p.Env.Quota == nil || p.Env.Provider == nil || p.Env.Ledger == nil ||
		p.Env.Audit == nil || p.Env.Spool == nil || p.Env.Log == nil || p.Tools == nil {
		return nil, errors.New("chat: Env with Pool, Quota, Provider, Ledger, Audit, Spool and Log, and Tools are required")
	}
	if err := checkConfig(p.Config, p.RouteModels, p.ContextTool, p.Tools.Registry(), p.Env.Ledger.Prices()); err != nil {
		return nil, err
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
	s := &Service{env: p.Env, tools: p.Tools, models: p.RouteModels, cfg: p.Config, contextTool: p.ContextTool,
		metrics: m, schema: schema, pingEvery: PingEvery}
	p.Env.Spool.Register(turnEndKind, s.decodeTurnEnd)
	return s, nil
}

// Run purges old conversations every PurgeInterval until ctx ends.
func (s *Service) Run(ctx context.Context) {
	heartbeat.Every(ctx, s.cfg.PurgeInterval, func(ctx context.Context) {
		if _, err := s.Purge(ctx); err != nil && ctx.Err() == nil {
			s.env.Log.Warn("chat purge failed", "err", err)
		}
	})
}
