package responses

import (
	"context"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
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

// answering is a routed stream that names its committed target before the
// first event is read (llm.Router's streams).
type answering interface{ Answering() llm.Target }

// exchange is one admitted POST /v1/responses: it owns the quota ticket
// until it ends, whatever happens.
type exchange struct {
	s       *Service
	p       auth.Principal
	req     *CreateRequest
	conv    []Item // the conversation sent: carried from previous_response_id, then input
	llmReq  llm.Request
	ticket  *quota.Ticket
	resp    *Response // what the client is told, filled in as the answer comes
	started time.Time
	target  llm.Target

	wr *sse.Writer // a streamed answer's, once begun
	// seqs numbers the events; the cut watch's goroutine may write the
	// stream's last event beside the work's.
	seqs atomic.Int64
	cut  *unit.CutWatch

	usage     *llm.Usage
	estimated bool
	trace     llm.Trace
	sent      int
	ended     bool
	lost      error

	audit auditState
	judge *judge.Judge
}

// HandleCreate serves POST /v1/responses. Errors before the first byte
// are DESIGN §5 JSON with their status; after it, a streamed answer ends
// with an error event and response.failed.
func (s *Service) HandleCreate(w http.ResponseWriter, r *http.Request) (err error) {
	ctx := r.Context()
	defer func() { s.count(err) }()
	p, err := auth.Caller(ctx)
	if err != nil {
		return err
	}
	body, err := httpx.ReadBody(r, MaxBodyBytes)
	if err != nil {
		return err
	}
	req, err := Decode(body)
	if err != nil {
		return err
	}
	conv, lreq, err := s.prepare(ctx, p, req)
	if err != nil {
		return err
	}
	// The Idempotency-Key keys the admission, as a completion's does
	// (docs/quota.md, "Keyed admission").
	key, err := quota.RequestKey(r)
	if err != nil {
		return err
	}
	x, err := s.admit(ctx, p, req, conv, int64(len(body)), lreq, key)
	if err != nil {
		return err
	}
	return x.run(w, r)
}

// count notes a request's outcome.
func (s *Service) count(err error) {
	outcome := "ok"
	if err != nil {
		outcome = string(apierr.From(err).Code)
	}
	s.total.WithLabelValues(outcome).Inc()
}

// prepare builds the conversation (a continued response's, then input)
// and the router's request from it.
func (s *Service) prepare(ctx context.Context, p auth.Principal, req *CreateRequest) ([]Item, llm.Request, error) {
	in, err := req.Items()
	if err != nil {
		return nil, llm.Request{}, err
	}
	var conv []Item
	if req.PreviousResponseID != "" {
		// Instructions are not carried over, as the API has it: only the
		// items are.
		if _, conv, err = s.load(ctx, p.UserID, req.PreviousResponseID, "previous_response_id"); err != nil {
			return nil, llm.Request{}, err
		}
	}
	conv = append(conv, in...)
	var instr string
	if req.Instructions != nil {
		instr = *req.Instructions
	}
	msgs, err := Messages(instr, conv)
	if err != nil {
		return nil, llm.Request{}, err
	}
	out := llm.Request{Model: req.Model, Messages: msgs, Whole: !req.Stream}
	if req.MaxOutputTokens != nil {
		out.MaxOutputTokens = *req.MaxOutputTokens
	}
	if req.Reasoning != nil && req.Reasoning.Effort != nil {
		out.ReasoningEffort = *req.Reasoning.Effort
	}
	out.ResponseFormat = req.Format.llmFormat()
	for _, t := range req.Tools {
		spec := llm.ToolSpec{Name: t.Name, Parameters: t.Parameters, Strict: t.Strict != nil && *t.Strict}
		if t.Description != nil {
			spec.Description = *t.Description
		}
		out.Tools = append(out.Tools, spec)
	}
	if len(req.Tools) > 0 {
		out.ParallelToolCalls = req.ParallelToolCalls
	}
	if out.ToolChoice, err = req.toolChoice(); err != nil {
		return nil, llm.Request{}, err
	}
	return conv, out, nil
}

// admit checks the route against the caller's plan, then takes the quota
// ticket with the pending audit row riding it, as a completion does.
func (s *Service) admit(ctx context.Context, p auth.Principal, req *CreateRequest, conv []Item, size int64, lreq llm.Request, key string) (*exchange, error) {
	field, err := s.env.CheckRoute(ctx, p, req.Model, lreq)
	if err != nil {
		return nil, err
	}
	// The router names Chat Completions' field, down to a schema keyword's
	// path (response_format.json_schema.schema.properties.days.minimum);
	// the client sent it as text.format (its schema under text.format.schema).
	if field == "response_format" {
		field = "text.format"
	} else if rest, ok := strings.CutPrefix(field, "response_format.json_schema."); ok {
		field = "text.format." + rest
	}
	if field != "" {
		return nil, invalidField(field, "no target of %q can honour it; leave it out or use another model", req.Model)
	}
	id := unit.NewID("resp_")
	var refused error
	rider, hash := s.env.AuditRider(audit.KindCompletion, id, p, req.Model, lreq, &refused)
	// The reservation is the body at about four bytes a token, plus a
	// continued conversation's items, plus the answer it allows.
	tokens := max(s.cfg.EstimateTokens, (size+3)/4+llm.EstimateInput(lreq)+int64(lreq.MaxOutputTokens))
	est := s.env.Reserve(tokens, s.env.ModelsOf(req.Model, s.models))
	est.Key = key
	ticket, err := s.env.Quota.Admit(ctx, p, est, rider)
	if err != nil {
		return nil, err
	}
	x := &exchange{s: s, p: p, req: req, conv: conv, llmReq: lreq, ticket: ticket, started: time.Now()}
	x.resp = x.newResponse(id)
	x.audit.began, x.audit.inputHash = refused == nil, hash
	if refused != nil {
		x.end(ctx)
		return nil, refused
	}
	if !s.env.RouteAllowed(req.Model, ticket.Limits.AllowsRoute) {
		x.audit.failure = unit.ErrNoSuchModel()
		x.end(ctx)
		return nil, x.audit.failure
	}
	return x, nil
}

// newResponse is the response as it begins: in progress, nothing out.
func (x *exchange) newResponse(id string) *Response {
	r := x.req
	resp := &Response{ID: id, Object: "response", CreatedAt: now(), Status: "in_progress", Instructions: r.Instructions,
		MaxOutputTokens: r.MaxOutputTokens, Model: r.Model, Output: []OutputItem{}, ParallelToolCalls: r.ParallelToolCalls == nil || *r.ParallelToolCalls,
		Store: r.Store == nil || *r.Store, Temperature: 1, TopP: 1, Truncation: "disabled", ServiceTier: "default",
		ToolChoice: "auto", Tools: r.Tools, Metadata: r.metadata()}
	resp.Text.Format = r.Format
	if resp.Tools == nil {
		resp.Tools = []Tool{}
	}
	for i := range resp.Tools {
		// The spec's FunctionTool has strict always: an unset strict is
		// sent to the model as not strict, and said so.
		if resp.Tools[i].Strict == nil {
			f := false
			resp.Tools[i].Strict = &f
		}
	}
	if set(r.ToolChoice) {
		resp.ToolChoice = r.ToolChoice
	}
	if r.PreviousResponseID != "" {
		resp.PreviousResponseID = &r.PreviousResponseID
	}
	if r.Reasoning != nil {
		resp.Reasoning.Effort = r.Reasoning.Effort
	}
	if r.User != "" {
		resp.User = &r.User
	}
	if r.SafetyIdentifier != "" {
		resp.SafetyIdentifier = &r.SafetyIdentifier
	}
	return resp
}

// run routes the request and answers it, then records and settles it:
// an answer, a failure, the client leaving or a panic.
func (x *exchange) run(w http.ResponseWriter, r *http.Request) (err error) {
	defer x.s.env.Spool.Hold()()
	ctx := r.Context()
	defer x.ticket.KeepAlive(ctx)()
	defer func() {
		if p := recover(); p != nil {
			err = apierr.Wrap(apierr.Internal, "", fmt.Errorf("responses: response panicked: %v\n%s", p, debug.Stack()))
			x.audit.failure = err
			x.end(ctx)
			if x.wr != nil {
				httpx.Logger(ctx).ErrorContext(ctx, "response failed", "err", err)
				x.fail(apierr.From(err))
				err = nil
			}
		}
		if x.wr != nil {
			x.cut.Stop()
			x.wr.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, x.s.cfg.TurnTimeout)
	defer cancel()
	req := x.llmReq
	req.SafetyIdentifier = x.s.env.SafetyIDs.For(x.p.UserID)
	st, err := x.s.env.Provider.Stream(ctx, req)
	if err != nil {
		x.failed(err)
		x.end(ctx)
		return unit.ClientError(ctx, err)
	}
	defer func() { _ = st.Close() }()
	if a, ok := st.(answering); ok {
		x.target = a.Answering()
		x.resp.Model = x.target.Model
	}
	if x.req.Stream {
		return x.stream(ctx, w, r, st)
	}
	return x.whole(ctx, w, st)
}

// whole answers stream: false with one Response. Nothing is written
// before the answer is whole, so every failure is JSON.
func (x *exchange) whole(ctx context.Context, w http.ResponseWriter, st llm.Stream) error {
	var text []byte
	var calls []OutputItem
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			x.failed(err)
			_ = st.Close()
			x.end(ctx)
			return unit.ClientError(ctx, err)
		}
		x.took(ev)
		switch ev.Kind {
		case llm.EventText:
			text = append(text, ev.Text...)
		case llm.EventToolCall:
			if tc := ev.ToolCall; tc != nil {
				calls = append(calls, callItem(unit.NewID("fc_"), "completed", tc.ID, tc.Name, tc.Arguments))
			}
		case llm.EventDone:
			screen := x.newScreen(ctx)
			out, leak := screen.Whole(string(text))
			x.judged(screen)
			x.done(ev)
			if leak != nil {
				x.audit.failure = leak
				x.end(ctx)
				return leak
			}
			if out != "" {
				x.resp.Output = append(x.resp.Output, messageItem(unit.NewID("msg_"), "completed", []OutputText{outputText(out)}))
			}
			x.resp.Output = append(x.resp.Output, calls...)
			x.complete()
			if err := x.end(ctx); err != nil {
				return err // its usage is lost: not a success
			}
			if err := x.keep(ctx); err != nil {
				return err
			}
			httpx.WriteJSON(w, http.StatusOK, x.resp)
			return nil
		}
	}
}
