package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/voxgate/voxgate/internal/apierr"
)

type ran struct {
	o        Outcome
	err      error
	panicked bool
}

// run executes the tool body with its timeout and panic recovery. The body
// is detached from the caller's cancellation: once a call is claimed it
// runs to a result or its timeout, so a client that retries after a drop
// replays a real answer rather than "cancelled".
func (e *Executor) run(ctx context.Context, t *Tool, inv Invocation) (Result, string) {
	inv.DryRun = e.dryRun
	if o, ok := e.guard(t, inv); !ok {
		// The guard's answer is the gateway's, not the tool's: its output
		// schema does not apply.
		res, err := shape(t, o)
		if err != nil {
			e.log.ErrorContext(ctx, "a guarded call could not be shaped", "tool", t.Name, "err", err)
			return shapeError(t, &ToolError{Code: ErrCodeFailed, Message: "The tool failed. Please try again later."}), outcomeFailed
		}
		return res, outcomeGuarded
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.Timeout)
	defer cancel()
	ch := make(chan ran, 1) // buffered: a body that overruns must not leak blocked
	go func() {
		defer func() {
			if p := recover(); p != nil {
				e.logPanic(ctx, t, inv, p)
				ch <- ran{panicked: true}
			}
		}()
		o, err := t.Run(rctx, inv)
		ch <- ran{o: o, err: err}
	}()

	var r ran
	select {
	case r = <-ch:
	case <-rctx.Done():
		// The body ignored its context; it is abandoned, not waited for.
		return timeoutResult(t), outcomeTimeout
	}
	if r.err != nil && rctx.Err() != nil && errors.Is(r.err, context.DeadlineExceeded) {
		return timeoutResult(t), outcomeTimeout
	}
	return e.settle(ctx, t, inv, r)
}

func (e *Executor) logPanic(ctx context.Context, t *Tool, inv Invocation, p any) {
	e.log.ErrorContext(ctx, "tool panicked", "tool", t.Name, "call_id", inv.CallID,
		"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
}

// settle turns what a body returned into the Result to store: a tool error
// the model can read, an output checked against the tool's schema, or the
// shaped outcome.
func (e *Executor) settle(ctx context.Context, t *Tool, inv Invocation, r ran) (Result, string) {
	switch {
	case r.panicked:
		return shapeError(t, &ToolError{Code: ErrCodePanic, Message: "The tool hit an internal error. Please try something else."}), outcomePanic
	case r.err != nil:
		var te *ToolError
		if errors.As(r.err, &te) {
			return shapeError(t, te), outcomeFailed
		}
		e.log.ErrorContext(ctx, "tool failed", "tool", t.Name, "call_id", inv.CallID, "err", r.err)
		return shapeError(t, &ToolError{Code: ErrCodeFailed, Message: "The tool failed. Please try again later."}), outcomeFailed
	}
	if t.output != nil {
		if err := checkOutput(t, r.o.Data); err != nil {
			// describeValidation: the library's error would log the values.
			e.log.ErrorContext(ctx, "tool output does not match its schema", "tool", t.Name, "problem", describeValidation(err))
			return shapeError(t, &ToolError{Code: ErrCodeBadOutput, Message: "The tool returned an answer in an unexpected shape."}), outcomeFailed
		}
	}
	res, err := shape(t, r.o)
	if err != nil {
		e.log.ErrorContext(ctx, "tool result could not be shaped", "tool", t.Name, "err", err)
		return shapeError(t, &ToolError{Code: ErrCodeFailed, Message: "The tool failed. Please try again later."}), outcomeFailed
	}
	return res, outcomeSucceeded
}

func timeoutResult(t *Tool) Result {
	return shapeError(t, &ToolError{Code: ErrCodeTimeout,
		Message: fmt.Sprintf("The tool did not answer within %s.", t.Timeout)})
}

func checkOutput(t *Tool, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return t.output.Validate(v)
}

// duplicate answers a call whose (session, call_id) row already exists:
// replay it when finished, wait while it runs (at most the tool's timeout
// plus the grace second), and close it as interrupted once its deadline
// has passed. It never runs the tool.
func (e *Executor) duplicate(ctx context.Context, t *Tool, c *Call, args []byte) (Result, error) {
	limit := time.Now().Add(t.Timeout + e.graceful)
	wait := 5 * time.Millisecond
	for {
		r, err := e.store.peek(ctx, c, args)
		if err != nil {
			return Result{}, err
		}
		switch {
		case r.userID != c.Principal.UserID:
			// Another user's session: never reveal it exists.
			return Result{}, apierr.New(apierr.NotFound, "")
		case !r.same:
			return Result{}, apierr.New(apierr.Conflict, "This call_id was already used for a different call.")
		case r.status != "running":
			return e.replay(t, r.response)
		case r.stale:
			ir := shapeError(t, &ToolError{Code: ErrCodeInterrupted,
				Message: "The call was interrupted before it finished and was not run again."})
			ir.CallID = c.CallID
			if err := e.store.interrupt(ctx, c, &ir); err != nil {
				return Result{}, err
			}
			continue // read whatever was stored, by us or a faster replica
		}
		now := time.Now()
		if !now.Before(limit) {
			return Result{}, apierr.New(apierr.Conflict, "This call is still running. Please retry shortly.").WithRetry(1)
		}
		// Wake at the deadline too, so a dead owner is noticed at once.
		sleep := min(wait, limit.Sub(now), r.remaining+2*time.Millisecond)
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(sleep):
		}
		wait = min(wait*3/2, 100*time.Millisecond)
	}
}

func (e *Executor) replay(t *Tool, stored []byte) (Result, error) {
	var res Result
	if err := json.Unmarshal(stored, &res); err != nil {
		return Result{}, apierr.Wrap(apierr.Internal, "", fmt.Errorf("tools: stored response of %s: %w", t.Name, err))
	}
	res.Replayed = true
	if res.SafetyFlags == nil {
		res.SafetyFlags = nonNilFlags(nil)
	}
	e.metrics.replays.WithLabelValues(t.Name).Inc()
	e.count(t.Name, outcomeReplayed)
	return res, nil
}
