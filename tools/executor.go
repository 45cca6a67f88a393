package tools

import (
	"context"
	"errors"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/randid"
	"github.com/voxgate/voxgate/safety"
)

// PlanResolver resolves the caller's effective plan (package quota does:
// user_plans row, else the JWT claim, else the default plan).
type PlanResolver interface {
	PlanFor(ctx context.Context, p auth.Principal) (name string, plan config.Plan, err error)
}

// Call is one tool call as voice or chat hands it over.
type Call struct {
	SessionID   string
	SessionKind SessionKind
	// Source says where the call came from ("direct", "sideband",
	// "relay", "chat", "confirm", ...); it is only recorded. Empty means
	// the session kind.
	Source string
	// CallID is the provider's call id. Empty generates one, and the call
	// cannot then be deduplicated.
	CallID string
	Name   string
	// Arguments is a JSON string holding an object, or an object.
	Arguments []byte
	// Principal is the authenticated caller; the tool gets its UserID.
	Principal auth.Principal
	// Confirmed says the user approved this call (DESIGN §7). Tools of tier
	// standard or elevated refuse to run without it.
	Confirmed bool
	// Plan is the caller's plan when the turn already resolved it (a
	// quota.Ticket's Plan), which saves a user_plans read per tool call.
	// Empty asks the executor's PlanResolver. It must be the server's own
	// resolution, never a client's value or a token claim.
	Plan string
	// Language and DisplayName are the user's profile language ("en",
	// "es-MX") and name when the caller knows them, for the screen
	// (screen.go); an empty Language has each piece's language detected.
	Language    string
	DisplayName string
	// Judge is the caller's unit's second opinion on sentences the claim
	// model is unsure of (safety.Options.Judge, docs/safety.md "A second
	// opinion"), nil when none is configured: the screen asks it too, so
	// a call's arguments and cards get the verdict the unit's answer would,
	// and its questions are the unit's to record and price. JudgeBand is
	// safety.Options.JudgeBand.
	Judge     safety.Judge
	JudgeBand float32
}

// ExecutorParams builds an Executor.
type ExecutorParams struct {
	DB       *pgxpool.Pool
	Registry *Registry
	Plans    PlanResolver
	// Metrics registers the voxgate_tools_* collectors; nil keeps them
	// unexported (tests).
	Metrics prometheus.Registerer
	// Logger receives tool failures and panics; nil means slog.Default.
	Logger *slog.Logger
	// MaxArgumentBytes caps a call's arguments; 0 means 16 KiB.
	MaxArgumentBytes int
	// DryRun (VOXGATE_DRY_RUN) turns every write into a proposal
	// (guard.go).
	DryRun bool
	// ContextTTL keeps a user's context-tool profile this long in this
	// process (voice.context_cache_ttl); 0 runs the tool for every turn
	// and session. Now is its clock; nil means time.Now.
	ContextTTL time.Duration
	Now        func() time.Time
	// Screen checks every call's arguments and cards with the output
	// filters (screen.go); nil screens nothing (tests of the executor
	// alone). The composition root sets safety.CheckText.
	Screen ScreenFunc
}

// Executor runs tool calls. It is safe for concurrent use, and any number
// of replicas may share one database.
type Executor struct {
	store    store
	reg      *Registry
	plans    PlanResolver
	metrics  *metrics
	log      *slog.Logger
	maxArgs  int
	dryRun   bool
	graceful time.Duration // added to a tool's timeout to form its deadline
	contexts *profileCache // nil: no context cache
	screen   ScreenFunc    // nil: no screen
}

// NewExecutor checks p and builds an Executor.
func NewExecutor(p ExecutorParams) (*Executor, error) {
	switch {
	case p.DB == nil:
		return nil, errors.New("tools: ExecutorParams.DB is required")
	case p.Registry == nil:
		return nil, errors.New("tools: ExecutorParams.Registry is required")
	case p.Plans == nil:
		return nil, errors.New("tools: ExecutorParams.Plans is required")
	case p.MaxArgumentBytes < 0:
		return nil, errors.New("tools: ExecutorParams.MaxArgumentBytes must not be negative")
	case p.ContextTTL < 0:
		return nil, errors.New("voice.context_cache_ttl must not be negative")
	}
	m, err := newMetrics(p.Metrics)
	if err != nil {
		return nil, err
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.MaxArgumentBytes == 0 {
		p.MaxArgumentBytes = 16 << 10
	}
	return &Executor{store: store{p.DB}, reg: p.Registry, plans: p.Plans, metrics: m,
		log: p.Logger, maxArgs: p.MaxArgumentBytes, dryRun: p.DryRun, graceful: time.Second,
		contexts: newProfileCache(p.ContextTTL, p.Now), screen: p.Screen}, nil
}

// Registry is the executor's registry.
func (e *Executor) Registry() *Registry { return e.reg }

// Execute runs one call, or replays it when (SessionID, CallID) was seen
// before. Errors are refusals with a DESIGN §5 code: TOOL_NOT_FOUND,
// TOOL_NOT_ALLOWED (voice allowlist, plan, missing confirmation),
// TOOL_VALIDATION_ERROR, CONFLICT (same call_id, different call), or
// INTERNAL. A tool that fails at run time is not an error: the Result
// carries Error and an Output the model can read.
func (e *Executor) Execute(ctx context.Context, c Call) (Result, error) {
	t, ok := e.reg.Lookup(c.Name)
	if !ok {
		e.count("unknown", outcomeRefused)
		return Result{}, apierr.New(apierr.ToolNotFound, "")
	}
	ctx, span := startTool(ctx, t.Name, c.CallID)
	res, err := e.execute(ctx, t, &c)
	if err != nil {
		e.count(t.Name, outcomeOf(err))
	}
	endTool(span, res, err)
	return res, err
}

func (e *Executor) execute(ctx context.Context, t *Tool, c *Call) (Result, error) {
	plan, args, err := e.admit(ctx, t, c, false)
	if u := (*Unsafe)(nil); errors.As(err, &u) {
		e.count(t.Name, outcomeRefused)
		return u.Result, nil // the model reads why, and may try again
	}
	if err != nil {
		return Result{}, err
	}
	inv := Invocation{UserID: c.Principal.UserID, SessionID: c.SessionID, SessionKind: c.SessionKind,
		CallID: c.CallID, Plan: plan, Args: args, metrics: e.metrics}
	res, err := e.claimAndRun(ctx, t, c, args, inv)
	if err == nil {
		e.screenCards(c, &res)
	}
	return res, err
}

// admit applies every check a call must pass before it may run: its shape,
// the voice allowlist, the confirmation its tier needs (unless the caller
// is only validating a call it will store for confirmation), the plan,
// and the arguments against the tool's schema. It returns the plan and
// the canonical arguments.
func (e *Executor) admit(ctx context.Context, t *Tool, c *Call, forConfirmation bool) (plan string, args []byte, err error) {
	if err := checkCall(c); err != nil {
		return "", nil, err
	}
	if c.SessionKind == KindVoice && !t.Voice {
		return "", nil, apierr.New(apierr.ToolNotAllowed, "That action isn't available in voice.")
	}
	if t.Tier != TierNone && !c.Confirmed && !forConfirmation {
		return "", nil, apierr.New(apierr.ToolNotAllowed, "That action needs your confirmation first.")
	}
	if plan = c.Plan; plan == "" {
		if plan, _, err = e.plans.PlanFor(ctx, c.Principal); err != nil {
			return "", nil, err
		}
	}
	if !t.AllowsPlan(plan) {
		return "", nil, apierr.New(apierr.ToolNotAllowed, "That action isn't included in your plan.")
	}
	v, args, err := parseArguments(c.Arguments, e.maxArgs)
	if err != nil {
		return "", nil, err
	}
	if err := validate(t, v); err != nil {
		return "", nil, err
	}
	if u := e.screenArguments(t, c, args); u != nil {
		return "", nil, u
	}
	return plan, args, nil
}

// claimAndRun runs a call exactly once across replicas: commit the running
// row (the claim), run the tool with no database connection held, then
// store its result. Only the replica whose claim inserted the row runs the
// tool; every other caller waits for the row and replays it (duplicate),
// polling without holding a connection either.
func (e *Executor) claimAndRun(ctx context.Context, t *Tool, c *Call, args []byte, inv Invocation) (Result, error) {
	id, owned, err := e.store.claim(ctx, c, args, t.Timeout+e.graceful)
	if err != nil {
		return Result{}, err
	}
	if !owned {
		return e.duplicate(ctx, t, c, args)
	}
	start := time.Now()
	res, outcome := e.run(ctx, t, inv)
	took := time.Since(start)
	res.CallID = c.CallID
	done, err := e.store.finish(ctx, id, &res, took)
	if err != nil {
		return Result{}, err
	}
	if !done {
		// A duplicate declared the row interrupted while this replica was
		// stalled; the stored answer is the one every caller must see.
		return e.duplicate(ctx, t, c, args)
	}
	e.observe(t, outcome, took)
	return res, nil
}

func (e *Executor) observe(t *Tool, outcome string, took time.Duration) {
	e.metrics.duration.WithLabelValues(t.Name).Observe(took.Seconds())
	e.count(t.Name, outcome)
}

// NewCallID mints the id of a tool call the model gave none: the
// executor's for a call that arrives without one, and the voice path's,
// which needs it before the executor runs (its audit row names it).
func NewCallID() string { return randid.New("vg_", 16) }

// checkCall validates the envelope that the caller, not the model, fills.
func checkCall(c *Call) error {
	if c.Principal.UserID == "" {
		return apierr.New(apierr.Unauthorized, "")
	}
	if c.SessionKind != KindVoice && c.SessionKind != KindChat {
		return apierr.Wrap(apierr.Internal, "", errors.New("tools: Call.SessionKind must be voice or chat"))
	}
	if c.Source == "" {
		c.Source = string(c.SessionKind)
	}
	if c.CallID == "" {
		c.CallID = NewCallID()
	}
	for _, f := range [...]struct{ name, v string }{{"session_id", c.SessionID}, {"call_id", c.CallID}, {"source", c.Source}} {
		if f.v == "" || len(f.v) > 200 || !utf8.ValidString(f.v) || containsNUL(f.v) {
			return apierr.Errorf(apierr.InvalidRequest, "%s must be 1–200 characters of text.", f.name)
		}
	}
	return nil
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

func (e *Executor) count(tool, outcome string) {
	e.metrics.calls.WithLabelValues(tool, outcome).Inc()
}

func outcomeOf(err error) string {
	switch apierr.CodeOf(err) {
	case apierr.ToolValidation, apierr.InvalidRequest:
		return outcomeInvalid
	case apierr.ToolNotAllowed, apierr.ToolNotFound, apierr.NotFound, apierr.Unauthorized:
		return outcomeRefused
	case apierr.Conflict:
		return outcomeConflict
	}
	return outcomeError
}
