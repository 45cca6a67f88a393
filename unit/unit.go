// Package unit is what a chat turn and an OpenAI-compatible completion
// share as units of metered model work (docs/chat.md): the reservation
// admission takes, the watch that tells a stream's client why the server
// cut it, the routed calls' traces, the judge's records, what a client is
// told of a route's failure, and the end — records, final audit row and
// settlement in one transaction. The endpoints themselves (package chat
// and package completions) say it each in their own wire form.
package unit

import (
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/randid"
	"github.com/voxgate/voxgate/internal/spool"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/safety"
	"github.com/voxgate/voxgate/safety/judge"
)

// Env is what every unit of one replica works with. The composition root
// builds one and hands it to both endpoints; it is safe for concurrent
// use.
type Env struct {
	Pool  *pgxpool.Pool
	Quota *quota.Service
	// Provider is the router: every model call of a unit asks it.
	Provider llm.Provider
	Ledger   *billing.Ledger
	Audit    *audit.Log
	// Spool is the durable path of units' ends; both endpoints register
	// their own kinds on it.
	Spool *spool.Spool
	// SafetyIDs make the salted user hash the provider sees as its safety
	// identifier; the zero value sends none.
	SafetyIDs safety.Identifiers
	// Judge is the safety filter's optional judge (config safety.judge);
	// the zero value asks none.
	Judge judge.Config
	Log   *slog.Logger
}

// NewID is a unit's id (a session, a turn, a message, a completion):
// prefix and 12 random bytes.
func NewID(prefix string) string { return randid.New(prefix, 12) }

// Reserve is a reservation of tokens, priced as input at the dearest
// rates of models (the targets that may answer), and one request.
func (e *Env) Reserve(tokens int64, models []string) quota.Estimate {
	var cost int64
	for _, m := range models {
		c, err := e.Ledger.Prices().Cost(billing.Line{Model: m, Usage: billing.Usage{TextIn: tokens}})
		if err == nil {
			cost = max(cost, c)
		}
	}
	return quota.Estimate{Tokens: tokens, CostMicros: cost, Calls: 1}
}
