package controlplane

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/agent"
	"github.com/voxgate/voxgate/audit"
	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/database"
	"github.com/voxgate/voxgate/llm"
	"github.com/voxgate/voxgate/tools"
)

// transcriptWait bounds how long a delegation waits for the input
// transcript to reach its offset_ms (it may arrive after the delegation);
// past it the task is read from what was heard.
const transcriptWait = 2 * time.Second

// Delegation wording the voice gets from the gateway itself; the backend
// model's own is voice.live.backend_instructions.
const (
	// delegationApology is said when a delegation's deadline passed, or its
	// loop failed: plainly, that it could not be done.
	delegationApology = "Tell the user plainly, in their language, that you could not get that done this time, and offer to try again."
)

// errNotVoiceTool refuses a call to a tool the delegation was not given:
// not voice-allowed, not tier none, or not in the plan.
var errNotVoiceTool = apierr.New(apierr.Forbidden, "This tool is not available in a voice session.")

// delegation is one session.delegation.created this holder claimed.
type delegation struct {
	id       string
	seq      int   // the order delegations were created in
	offsetMS int64 // its place on the session timeline
	waitTill time.Time
	deadline time.Time
	started  bool
	done     bool // answered, timed out or failed: anything later is dropped
	cancel   context.CancelFunc
	row      audit.Row
	began    time.Time
	span     trace.Span // from its start to its answer (tracing.go)
}

// delegationOut is what a delegation's loop hands its holder: a progress
// note (thinking), or its end (final) with the answer or the error and
// what the model calls used.
type delegationOut struct {
	d       *delegation
	final   bool
	content string
	err     error
	usage   agent.Usage
}

// claimDelegationSQL takes a delegation id once per session across
// replicas: a duplicated event, or an adopter reading it again, finds it
// taken.
const claimDelegationSQL = `INSERT INTO voice_live_delegations (session_id, delegation_id) VALUES ($1, $2)
ON CONFLICT DO NOTHING`

// delegated handles session.delegation.created: claim it, then run it once
// the transcript covers its offset (or transcriptWait has passed).
func (c *liveCall) delegated(ctx context.Context, id string, offsetMS int64) {
	if id == "" || len(id) > 128 {
		return
	}
	tag, err := c.s.pool.Exec(ctx, claimDelegationSQL, c.id, id)
	if err != nil {
		c.s.log.Warn("live: delegation not claimed; not run", "session_id", c.id, "delegation_id", id, "err", database.Error("claim", err))
		return
	}
	if tag.RowsAffected() == 0 {
		return // run already, here or by an earlier holder
	}
	c.s.metrics.live.delegations.WithLabelValues(delegationCreated).Inc()
	now := c.s.clock.Now()
	c.seq++
	d := &delegation{id: id, seq: c.seq, offsetMS: offsetMS, waitTill: now.Add(transcriptWait),
		deadline: now.Add(c.s.cfg.Live.DelegationDeadline), began: time.Now()}
	c.delegations[id] = d
	c.startReady(ctx, now)
}

// startReady starts every waiting delegation the transcript now covers,
// or whose wait ran out.
func (c *liveCall) startReady(ctx context.Context, now time.Time) {
	for _, d := range c.delegations {
		if !d.started && !d.done && (c.heardMS >= d.offsetMS || !now.Before(d.waitTill)) {
			c.start(ctx, d)
		}
	}
}

// start runs d's task through the agent loop in its own goroutine, with
// the plan's voice tools of tier none, the session's per-minute window and
// the executor (source live), the configured backend instructions with
// the session's (and its profile) after them, and the configured backend
// model. Its progress and answer come back on c.out.
func (c *liveCall) start(ctx context.Context, d *delegation) {
	d.started = true
	ctx = c.startDelegation(ctx, d)
	task := taskText(c.transcript, d.offsetMS)
	d.row = audit.Row{ID: audit.VoiceToolID(c.id, "delegation/"+d.id), Kind: audit.KindLiveDelegation, UserID: c.userID,
		SessionID: c.id, CallID: d.id, Route: c.s.backendModel, InputHash: audit.Hash(task),
		FiltersRan: []string{audit.FilterInput}} // taskText sanitizes every line
	if err := c.s.audit.Begin(ctx, d.row); err != nil {
		c.s.log.Warn("live: a delegation's audit row could not be begun", "session_id", c.id, "delegation_id", d.id, "err", err)
	}
	rctx, cancel := context.WithDeadline(ctx, time.Now().Add(time.Until(d.deadline)+time.Second))
	d.cancel = cancel
	system := c.instructions
	if backend := c.s.cfg.Live.BackendInstructions; backend != "" {
		system = backend + "\n\n" + system
	}
	req := llm.Request{Model: c.s.backendModel, Tools: tools.Specs(c.s.liveTools(c.plan)), SafetyIdentifier: c.s.safetyID.For(c.userID),
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: task}}}
	h := &delegationHost{s: c.s, p: auth.Principal{UserID: c.userID, Plan: c.plan}, sessionID: c.id, d: d, out: c.out}
	c.running++
	c.s.dwg.Add(1)
	go func() {
		defer c.s.dwg.Done()
		defer cancel()
		res, err := agent.Run(rctx, c.s.backend, req, h)
		traceDelegationRan(d.span, h.ran, res.Usage)
		h.send(rctx, delegationOut{d: d, final: true, content: res.Text, err: err, usage: res.Usage})
	}()
}

// liveTools are the plan's voice tools that need no confirmation: the
// ones a delegation may call.
func (s *Service) liveTools(plan string) []*tools.Tool {
	var out []*tools.Tool
	for _, t := range s.tools.Registry().ForPlan(plan, true) {
		if t.Tier == tools.TierNone {
			out = append(out, t)
		}
	}
	return out
}

// deliver acts on a delegation's output, in the holder goroutine.
func (c *liveCall) deliver(ctx context.Context, o delegationOut) {
	d := o.d
	if o.final {
		c.running--
		c.addBackend(o.usage) // what it used is spent, answered or not
	}
	if d.done {
		if o.final {
			c.s.metrics.live.delegations.WithLabelValues(delegationDropped).Inc()
		}
		return
	}
	if !o.final {
		c.appendOrLog(ctx, "thinking", d.id, c.sb.Think(ctx, d.id, o.content, ""))
		return
	}
	d.done = true
	c.lastActivity = c.s.clock.Now()
	status := audit.Success
	switch {
	case o.err != nil || o.content == "":
		c.appendOrLog(ctx, "instructions", d.id, c.sb.Instruct(ctx, d.id, delegationApology, ""))
		status = audit.ForCode(apierr.CodeOf(o.err))
		c.s.metrics.live.delegations.WithLabelValues(delegationTimedOut).Inc()
	case c.answeredSeq > d.seq:
		// A newer delegation has answered: this one is superseded.
		c.s.metrics.live.delegations.WithLabelValues(delegationDropped).Inc()
		status = audit.Degraded
	default:
		var say string
		if say, status = c.screenComment(ctx, d, clipComment(o.content)); say == "" {
			c.appendOrLog(ctx, "instructions", d.id, c.sb.Instruct(ctx, d.id, delegationApology, ""))
			c.s.metrics.live.delegations.WithLabelValues(delegationBlocked).Inc()
			break
		}
		c.answeredSeq = d.seq
		c.appendOrLog(ctx, "commentary", d.id, c.sb.Comment(ctx, d.id, say, ""))
		c.s.metrics.live.delegations.WithLabelValues(delegationAnswered).Inc()
	}
	c.finishDelegation(ctx, d, status, o.content)
}

// expire tells the voice about every delegation past its deadline and
// drops whatever its loop still returns.
func (c *liveCall) expire(ctx context.Context, now time.Time) {
	for _, d := range c.delegations {
		if d.started && !d.done && !now.Before(d.deadline) {
			d.done = true
			d.cancel()
			c.appendOrLog(ctx, "instructions", d.id, c.sb.Instruct(ctx, d.id, delegationApology, ""))
			c.s.metrics.live.delegations.WithLabelValues(delegationTimedOut).Inc()
			c.finishDelegation(ctx, d, audit.Refused, "")
		}
	}
}

// wake is the earliest of next and the delegations' waits and deadlines
// still ahead.
func (c *liveCall) wake(next time.Time) time.Time {
	for _, d := range c.delegations {
		switch {
		case d.done:
		case !d.started:
			next = earliest(next, d.waitTill)
		default:
			next = earliest(next, d.deadline)
		}
	}
	return next
}

func (c *liveCall) finishDelegation(ctx context.Context, d *delegation, want audit.Status, answer string) {
	r := d.row
	r.Status, r.Model, r.OutputHash = audit.Settle(audit.KindLiveDelegation, want, r.FiltersRan), c.observed.BackendModel, audit.Hash(answer)
	r.DurationMS = time.Since(d.began).Milliseconds()
	endDelegation(d, string(r.Status))
	if err := c.s.audit.Finish(context.WithoutCancel(ctx), r); err != nil && !errors.Is(err, audit.ErrFinal) {
		c.s.log.Warn("live: a delegation's audit row could not be finished", "session_id", c.id, "delegation_id", d.id, "err", err)
	}
	delete(c.delegations, d.id)
}

// addBackend adds a delegation loop's usage to the session's backend line.
// A loop whose only call was cut before the provider named its model
// (estimated, agent.Usage) is priced as the model it asked for, unless an
// earlier call named one.
func (c *liveCall) addBackend(u agent.Usage) {
	if u.Calls == 0 {
		return
	}
	// Each call as the ledger counts any model call (billing.FromCalls),
	// so the backend keeps its 12-hour writes and the tier that served it.
	c.observed.Backend = c.observed.Backend.Add(billing.FromCalls(u.Each))
	switch {
	case u.Model != "":
		c.observed.BackendModel = u.Model
	case c.observed.BackendModel == "":
		c.observed.BackendModel = c.s.backendModel
	}
	c.s.noteUsage(c.id, c.usage())
}

// loopsWait bounds how long the end of a session, or of this replica's
// hold on it, waits for its delegation loops to return once cancelled: a
// model call stops at once, but a tool call in flight runs to its end
// (exactly once, tools.Executor), at most its timeout and the executor's
// grace. So the bound is the longest timeout of the tools a delegation of
// plan may call, and a second.
func (s *Service) loopsWait(plan string) time.Duration {
	wait := time.Duration(0)
	for _, t := range s.liveTools(plan) {
		wait = max(wait, t.Timeout)
	}
	return wait + time.Second
}

// stopLoops cancels the delegations still running and waits (loopsWait)
// for each loop to return what its model calls used, so that it reaches
// the record: a call that returned as reported, a call cut mid-way as the
// loop estimates it (agent.Usage). Nobody will hear their answers now:
// they are dropped, and their audit rows settle refused.
func (c *liveCall) stopLoops(ctx context.Context) {
	for _, d := range c.delegations {
		if d.cancel != nil {
			d.cancel()
		}
	}
	if c.running == 0 {
		return
	}
	t := time.NewTimer(c.s.loopsWait(c.plan))
	defer t.Stop()
	for c.running > 0 {
		select {
		case o := <-c.out:
			if !o.final {
				continue
			}
			c.running--
			c.addBackend(o.usage)
			if !o.d.done {
				o.d.done = true
				c.s.metrics.live.delegations.WithLabelValues(delegationDropped).Inc()
				c.finishDelegation(ctx, o.d, audit.Refused, "")
			}
		case <-t.C:
			c.s.log.Warn("live: delegation loops still running at the end; what they used is not recorded",
				"session_id", c.id, "running", c.running)
			return
		}
	}
}

func (c *liveCall) appendOrLog(ctx context.Context, kind, delegationID string, err error) {
	if err != nil && ctx.Err() == nil {
		c.s.log.Warn("live: append not sent", "kind", kind, "session_id", c.id, "delegation_id", delegationID, "err", err)
	}
}

// delegationHost is the agent loop's host for one delegation: progress
// as thinking, tool calls through the session's window and the executor.
type delegationHost struct {
	s         *Service
	p         auth.Principal
	sessionID string
	d         *delegation
	out       chan<- delegationOut
	noted     bool
	ran       []string // the tools the loop ran, in order (only its goroutine touches it)
}

func (h *delegationHost) send(ctx context.Context, o delegationOut) {
	select {
	case h.out <- o:
	case <-ctx.Done():
		if o.final {
			// The holder may be gone; a final result must not block.
			select {
			case h.out <- o:
			default:
			}
		}
	}
}

// Progress tells the voice, silently, that the task is under way, once
// per loop: it also cancels the automatic "one moment".
func (h *delegationHost) Progress(ctx context.Context, p agent.Phase, done bool) error {
	if done || h.noted {
		return nil
	}
	h.noted = true
	h.send(ctx, delegationOut{d: h.d, content: "The backend is working on the user's request."})
	return nil
}

func (h *delegationHost) Text(context.Context, string) error { return nil }

// Call runs one tool call as the session's user: the per-minute window,
// the voice allowlist and the executor's once-per-call id (the delegation
// id and the loop's call id). A refused call is answered with the refusal
// for the model to say, and nothing runs.
func (h *delegationHost) Call(ctx context.Context, tc llm.ToolCall, _ string) (agent.Outcome, error) {
	if !h.allowed(tc.Name) {
		return agent.Outcome{Output: tools.Refusal(errNotVoiceTool).Output()}, nil
	}
	h.ran = append(h.ran, tc.Name)
	res, err := h.s.runTool(ctx, h.p, h.sessionID, ModeLive, ToolCallRequest{CallID: h.d.id + "." + tc.ID, Name: tc.Name,
		Arguments: []byte(tc.Arguments)})
	if err != nil {
		return agent.Outcome{Output: tools.Refusal(err).Output()}, nil
	}
	return agent.Outcome{Output: res.Output}, nil
}

func (h *delegationHost) allowed(name string) bool {
	for _, t := range h.s.liveTools(h.p.Plan) {
		if t.Name == name {
			return true
		}
	}
	return false
}
