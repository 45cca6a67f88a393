package completions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/httpx"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/quota"
	"github.com/voxgate/voxgate/safety/judge"
	"github.com/voxgate/voxgate/sse"
	"github.com/voxgate/voxgate/unit"
)

// The OpenAI-compatible endpoint (DESIGN §7, docs/chat.md): the client
// keeps the conversation and its own tools; voxgate authenticates, admits,
// routes by model = a route name, meters and records. It stores no
// message and runs no tool.

// answering is a routed stream that names its committed target before the
// first event is read (llm.Router's streams).
type answering interface{ Answering() llm.Target }

// completion is one admitted POST /v1/chat/completions: it owns the quota
// ticket until it ends, whatever happens.
type completion struct {
	s       *Service
	p       auth.Principal
	req     *CompletionRequest
	llmReq  llm.Request
	ticket  *quota.Ticket
	id      string // the answer's id, and its records' session and turn
	created int64
	started time.Time
	target  llm.Target // the target that committed, once one has
	obs     *completionObs

	// A streamed answer's, once it has begun: its writer, its chunks on
	// it, and the watch for a server's cut (unit/cut.go).
	wr  *sse.Writer
	cw  *ChunkWriter
	cut *unit.CutWatch

	// What the answer used: the committed target's usage, or an estimate
	// when it reported none (estimated), and the trace's billed failures.
	usage     *llm.Usage
	estimated bool
	trace     llm.Trace
	sent      int   // bytes of content and tool-call arguments received, for an estimate
	ended     bool  // end ran
	lost      error // what end said when its usage could not be kept

	audit completionAudit // its audit row (auditrow.go)
	judge *judge.Judge    // the output filter's judge, nil without one (unit/judge.go)
}

// HandleCompletions serves POST /v1/chat/completions. Errors before the
// first byte are DESIGN §5 JSON with their status; after it, a streamed
// answer ends with OpenAI's in-stream error object and no [DONE].
func (s *Service) HandleCompletions(w http.ResponseWriter, r *http.Request) (err error) {
	ctx := r.Context()
	obs := &completionObs{m: s.metrics, received: time.Now(), route: unknownRoute}
	defer func() { obs.done(ctx, err) }()
	p, err := auth.Caller(ctx)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r, MaxCompletionBodyBytes)
	if err != nil {
		return err
	}
	req, err := DecodeCompletionRequest(body)
	if err != nil {
		return err
	}
	if s.env.RouteAllowed(req.Model, func(string) bool { return true }) {
		obs.route = req.Model
	}
	obs.stream = req.Stream
	lreq, err := req.LLMRequest()
	if err != nil {
		return err
	}
	// The Idempotency-Key keys the admission (docs/quota.md, "Keyed
	// admission"): a retry after a lost admission reply gets the first
	// attempt's ticket, counted once; one sent while it runs is 409.
	key, err := quota.RequestKey(r)
	if err != nil {
		return err
	}
	c, err := s.admitCompletion(ctx, p, req, int64(len(body)), lreq, key)
	if err != nil {
		return err
	}
	c.obs = obs
	return c.run(w, r)
}

// admitCompletion checks the route against the caller's plan, then takes
// the quota ticket: a request for a route the plan may not use counts
// nothing (DESIGN §9). The route is checked again against the plan
// admission found, which may have changed in between.
func (s *Service) admitCompletion(ctx context.Context, p auth.Principal, req *CompletionRequest, size int64, lreq llm.Request, key string) (*completion, error) {
	field, err := s.env.CheckRoute(ctx, p, req.Model, lreq)
	if err != nil {
		return nil, err
	}
	if field != "" {
		return nil, invalidField(field, "no target of %q can honour it; leave it out or use another model", req.Model)
	}
	// The audit row, pending until the completion ends, rides the
	// admission: one round trip before the model call, not two.
	id := unit.NewID("chatcmpl-")
	var refused error
	rider, hash := s.env.AuditRider(audit.KindCompletion, id, p, req.Model, lreq, &refused)
	est := s.env.Reserve(completionEstimate(s.cfg.EstimateTokens, size, lreq.MaxOutputTokens), s.env.ModelsOf(req.Model, s.models))
	est.Key = key
	ticket, err := s.env.Quota.Admit(ctx, p, est, rider)
	if err != nil {
		return nil, err
	}
	c := &completion{s: s, p: p, req: req, llmReq: lreq, ticket: ticket, id: id,
		created: time.Now().Unix(), started: time.Now()}
	c.audit.began, c.audit.inputHash = refused == nil, hash
	if refused != nil {
		c.end(ctx)
		return nil, refused
	}
	if !s.env.RouteAllowed(req.Model, ticket.Limits.AllowsRoute) {
		c.audit.failure = unit.ErrNoSuchModel()
		c.end(ctx)
		return nil, c.audit.failure
	}
	return c, nil
}

// completionEstimate is what a request reserves: its body at about four
// bytes a token (the whole conversation is sent as input) and the answer
// it allows, never less than chat.estimate_tokens.
func completionEstimate(floor, bodyBytes int64, maxOut int) int64 {
	return max(floor, (bodyBytes+3)/4+int64(maxOut))
}

// run routes the request and answers it, then records and settles it:
// an answer, a failure, the client leaving or a panic.
func (c *completion) run(w http.ResponseWriter, r *http.Request) (err error) {
	defer c.s.env.Spool.Hold()() // shutdown waits for the end to be handed over
	ctx := r.Context()
	defer c.ticket.KeepAlive(ctx)()
	defer func() {
		if p := recover(); p != nil {
			err = apierr.Wrap(apierr.Internal, "", fmt.Errorf("completions: completion panicked: %v\n%s", p, debug.Stack()))
			c.audit.failure = err
			c.end(ctx) // a second end does nothing
			if c.cw != nil {
				// The stream has begun: the error goes in it, never a JSON
				// body after its chunks.
				httpx.Logger(ctx).ErrorContext(ctx, "completion failed", "err", err)
				c.fail(apierr.From(err))
				err = nil
			}
		}
		if c.wr != nil {
			c.cut.Stop()
			c.wr.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, c.s.cfg.TurnTimeout)
	defer cancel()
	req := c.llmReq
	req.SafetyIdentifier = c.s.env.SafetyIDs.For(c.p.UserID)
	st, err := c.s.env.Provider.Stream(ctx, req)
	if err != nil {
		c.failed(err)
		c.end(ctx)
		return unit.ClientError(ctx, err)
	}
	defer func() { _ = st.Close() }()
	if a, ok := st.(answering); ok {
		c.target = a.Answering()
	}
	if c.req.Stream {
		return c.stream(ctx, w, r, st)
	}
	return c.whole(ctx, w, st)
}

// model is the model the answer names: the committed target's.
func (c *completion) model() string {
	if c.target.Model != "" {
		return c.target.Model
	}
	return c.req.Model
}

// done takes the end of a whole answer: its usage and trace.
func (c *completion) done(ev llm.Event) {
	c.trace = ev.Trace
	if ev.Usage != nil {
		u := *ev.Usage
		c.usage = &u
		return
	}
	c.estimate()
}

// failed takes a failure: the trace's billed attempts, and for one after
// commit the answering attempt's usage, reported or estimated.
func (c *completion) failed(err error) {
	c.audit.failure = err
	var re *llm.RouteError
	if !errors.As(err, &re) {
		if c.target.Model != "" {
			c.estimate() // the caller left mid-answer: the router has no verdict
		}
		return
	}
	c.trace = re.Trace
	if !re.Committed {
		return
	}
	if a, ok := re.Trace.Answered(); ok && a.Usage != nil {
		u := *a.Usage
		c.usage = &u
		return
	}
	c.estimate()
}

// estimate counts an answer whose provider reported nothing, by the rule
// the chat turn counts one by (llm.EstimateInput).
func (c *completion) estimate() {
	c.usage = &llm.Usage{InputTokens: llm.EstimateInput(c.llmReq), OutputTokens: llm.EstimateOutput(c.sent)}
	c.estimated = true
}
