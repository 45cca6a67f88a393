package realtime

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/telemetry"
)

// Each call voxgate makes to create or end a voice session at the provider
// is a client span of the session's trace (docs/operations.md, "Traces"):
// "realtime mint", "realtime create_call", "realtime create_live" and
// "realtime hangup", with the provider, the model asked and, once known,
// the provider's call id; never the instructions, the offer or the user.
var tracer = telemetry.Tracer("realtime")

func startOp(ctx context.Context, op, model string) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, "realtime "+op, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("gen_ai.provider.name", "openai"))
		if model != "" {
			span.SetAttributes(attribute.String("gen_ai.request.model", model))
		}
	}
	return ctx, span
}

func endOp(span trace.Span, callID string, err error) {
	if span.IsRecording() {
		if callID != "" {
			span.SetAttributes(attribute.String("voxgate.voice.call_id", callID))
		}
		if err != nil {
			code := string(apierr.CodeOf(err))
			span.SetAttributes(attribute.String("error.type", code))
			span.SetStatus(codes.Error, code)
		}
	}
	span.End()
}

// Mint creates a client secret for s that expires after ttl (clamped to
// [MinSecretTTL, MaxSecretTTL]): a direct session's credentials. Failures
// are *apierr.Error with an AI_* code (see normalize).
func (c *Client) Mint(ctx context.Context, s Session, ttl time.Duration) (Secret, error) {
	ctx, span := startOp(ctx, "mint", s.Model)
	sec, err := c.mint(ctx, s, ttl)
	endOp(span, "", err)
	return sec, err
}

// CreateCall places a call for the app's SDP offer with the server key and
// the whole session config s, and returns the SDP answer and the call id.
func (c *Client) CreateCall(ctx context.Context, offer string, s Session) (Call, error) {
	ctx, span := startOp(ctx, "create_call", s.Model)
	call, err := c.createCall(ctx, offer, s)
	endOp(span, call.ID, err)
	return call, err
}

// CreateLive creates a GPT-Live WebRTC session for the phone's SDP offer.
func (c *Client) CreateLive(ctx context.Context, offer string, s LiveSession) (LiveCall, error) {
	ctx, span := startOp(ctx, "create_live", s.Model)
	call, err := c.createLive(ctx, offer, s)
	endOp(span, call.ID, err)
	return call, err
}

// Hangup ends a call. A call the provider no longer knows is
// ErrCallNotFound, which is not an error of the span's.
func (c *Client) Hangup(ctx context.Context, callID string) error {
	ctx, span := startOp(ctx, "hangup", "")
	err := c.hangup(ctx, callID)
	if errors.Is(err, ErrCallNotFound) {
		endOp(span, callID, nil)
	} else {
		endOp(span, callID, err)
	}
	return err
}
