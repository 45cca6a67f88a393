// Package completions serves the OpenAI-compatible endpoints (DESIGN §7,
// docs/chat.md): POST /v1/chat/completions and GET /v1/models. The client
// keeps the conversation and its own tools; voxgate authenticates,
// admits, routes by model = a route name, screens, meters and records. It
// stores no message and runs no tool. What it shares with the chat turn —
// admission's reservation, the end, the cut, the judge — is package unit.
package completions

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/unit"
)

// Params are what a Service needs. New checks them.
type Params struct {
	// Env is the replica's, shared with the chat turn: its Provider is
	// the router, whose routes are the models callers name.
	Env *unit.Env
	// Models are chat.route's targets' models: a reservation prices at
	// the dearest when a route names none of its own.
	Models []string
	// Config is the chat section: chat.estimate_tokens sizes a
	// reservation, chat.turn_timeout bounds an answer.
	Config config.Chat
	// Registerer receives the voxgate_chat_completion* metrics; nil keeps
	// them unexported (tests).
	Registerer prometheus.Registerer
}

// Service serves the endpoints. It is safe for concurrent use, and any
// number of replicas may share one database.
type Service struct {
	env     *unit.Env
	models  []string // Params.Models
	cfg     config.Chat
	metrics *metrics
	// created is when the service started: the created time of the
	// routes GET /v1/models lists.
	created int64
}

// New builds the service and registers its end's kind on the spool. The
// chat service checks the shared config; New checks only what it needs.
func New(p Params) (*Service, error) {
	if p.Env == nil || p.Env.Pool == nil || p.Env.Quota == nil || p.Env.Provider == nil || p.Env.Ledger == nil ||
		p.Env.Audit == nil || p.Env.Spool == nil || p.Env.Log == nil {
		return nil, errors.New("completions: Env with Pool, Quota, Provider, Ledger, Audit, Spool and Log is required")
	}
	if len(p.Models) == 0 {
		return nil, errors.New("completions: Models are required")
	}
	if p.Registerer == nil {
		p.Registerer = prometheus.NewRegistry()
	}
	m, err := newMetrics(p.Registerer)
	if err != nil {
		return nil, err
	}
	s := &Service{env: p.Env, models: p.Models, cfg: p.Config, metrics: m, created: time.Now().Unix()}
	p.Env.Spool.Register(completionEndKind, p.Env.DecodeJob)
	return s, nil
}
