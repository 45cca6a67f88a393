// Package responses serves OpenAI's Responses API (issue #41, docs/chat.md
// "The Responses endpoint"): POST /v1/responses, and GET and DELETE
// /v1/responses/{id} for a stored response's owner. voxgate
// authenticates, admits, routes by model = a route name, screens, meters
// and records, as for /v1/chat/completions; the client's function tools
// are passed to the model and never run. The router still calls
// providers through llm: the endpoint translates Responses items and
// events to llm's request and events and back. What it shares with the
// chat turn and the completion is package unit.
package responses

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/heartbeat"
	"github.com/voxgate/voxgate/unit"
)

// Params are what a Service needs. New checks them.
type Params struct {
	// Env is the replica's, shared with the chat turn and completions:
	// its Provider is the router, whose routes are the models callers
	// name.
	Env *unit.Env
	// Models are chat.route's targets' models: a reservation prices at
	// the dearest when a route names none of its own.
	Models []string
	// Config is the chat section: chat.estimate_tokens sizes a
	// reservation, chat.turn_timeout bounds an answer,
	// chat.retention_days keeps stored responses and chat.purge_interval
	// purges them.
	Config config.Chat
	// Registerer receives voxgate_responses_total; nil keeps it
	// unexported (tests).
	Registerer prometheus.Registerer
}

// Service serves the endpoints. It is safe for concurrent use, and any
// number of replicas may share one database: a stored response is a
// row, read by whichever replica a continuation reaches.
type Service struct {
	env    *unit.Env
	models []string
	cfg    config.Chat
	total  *prometheus.CounterVec
}

// endKind names a response's end on the durable path.
const endKind = "response_end"

// New builds the service and registers its end's kind on the spool.
func New(p Params) (*Service, error) {
	if p.Env == nil || p.Env.Pool == nil || p.Env.Quota == nil || p.Env.Provider == nil || p.Env.Ledger == nil ||
		p.Env.Audit == nil || p.Env.Spool == nil || p.Env.Log == nil {
		return nil, errors.New("responses: Env with Pool, Quota, Provider, Ledger, Audit, Spool and Log is required")
	}
	if len(p.Models) == 0 {
		return nil, errors.New("responses: Models are required")
	}
	if p.Config.PurgeInterval <= 0 {
		return nil, errors.New("responses: Config.PurgeInterval must be positive")
	}
	if p.Registerer == nil {
		p.Registerer = prometheus.NewRegistry()
	}
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "voxgate_responses_total",
		Help: "POST /v1/responses requests by outcome: ok or the error code."}, []string{"outcome"})
	if err := p.Registerer.Register(total); err != nil {
		return nil, err
	}
	s := &Service{env: p.Env, models: p.Models, cfg: p.Config, total: total}
	p.Env.Spool.Register(endKind, p.Env.DecodeJob)
	return s, nil
}

// Run purges stored responses past chat.retention_days every
// chat.purge_interval until ctx ends, as chat purges its sessions.
func (s *Service) Run(ctx context.Context) {
	heartbeat.Every(ctx, s.cfg.PurgeInterval, func(ctx context.Context) {
		if _, err := s.Purge(ctx); err != nil && ctx.Err() == nil {
			s.env.Log.Warn("responses purge failed", "err", err)
		}
	})
}

// now is when a response is created, in the spec's seconds.
func now() int64 { return time.Now().Unix() }
