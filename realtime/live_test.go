package realtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/live"
	"github.com/voxgate/voxgate/internal/apierr"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/realtime"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// newLiveClient starts a simulator (its Live clock 50 times real time,
// five packets a turn) and a client on it.
func newLiveClient(t *testing.T, lv sim.Live) (*sim.Server, *realtime.Client) {
	t.Helper()
	// A fast clock, with a connect timeout a loaded machine's ICE cannot
	// run into.
	lv.ClockRate, lv.TurnPackets, lv.ConnectTimeout = 50, 5, time.Hour
	s, base := testkit.NewSim(t, sim.Config{Live: lv})
	zero := 0
	c, err := realtime.New(realtime.Params{BaseURL: base + "/v1", APIKey: simtest.TestKey, MaxRetries: &zero})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func liveCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startLive creates a session for a loopback phone and attaches to it.
func startLive(t *testing.T, ctx context.Context, c *realtime.Client, s realtime.LiveSession) (*simtest.Caller, realtime.LiveCall, *realtime.LiveSideband) {
	t.Helper()
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CreateLive(ctx, offer, s)
	if err != nil {
		t.Fatalf("CreateLive: %v", err)
	}
	if err := phone.Accept(call.Answer); err != nil {
		t.Fatal(err)
	}
	sb, err := c.AttachLiveRetry(ctx, call.ID, 5*time.Second)
	if err != nil {
		t.Fatalf("AttachLive: %v", err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	if err := phone.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	return phone, call, sb
}

// next reads the sideband up to the first event of type typ.
func next(t *testing.T, ctx context.Context, sb *realtime.LiveSideband, typ string) (live.ConnectServerEventUnion, []string) {
	t.Helper()
	var seen []string
	for {
		ev, err := sb.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v (saw %v)", typ, err, seen)
		}
		seen = append(seen, ev.Type)
		if ev.Type == typ {
			var u live.ConnectServerEventUnion
			if err := u.UnmarshalJSON([]byte(ev.RawJSON())); err != nil || u.Type != typ {
				t.Fatalf("%s as openai-go's union: %q, %v", ev.RawJSON(), u.Type, err)
			}
			return u, seen
		}
	}
}

// TestLiveThroughTheSim: the session is created with the gateway's config
// (client delegation with its delay, nothing stored, the phone limited to
// muting), a turn's delegation comes in typed, and thinking, commentary,
// session-wide instructions and session.close go out and are applied.
func TestLiveThroughTheSim(t *testing.T) {
	t.Parallel()
	s, c := newLiveClient(t, sim.Live{Said: []string{"a quick pasta recipe"}})
	ctx := liveCtx(t)
	phone, call, sb := startLive(t, ctx, c, realtime.LiveSession{Model: "gpt-live-1", Voice: "cedar",
		Instructions: "You are a cooking assistant.", AckDelay: 400 * time.Millisecond})

	e, err := phone.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var started live.ServerEventUnion
	if err := started.UnmarshalJSON(e.Raw); err != nil || started.Type != "session.started" {
		t.Fatalf("phone's first event: %s (%v)", e.Raw, err)
	}
	res := started.AsSessionStartedEvent().Session
	if res.ID != call.ID || res.Store || res.Instructions != "You are a cooking assistant." ||
		res.Audio.Output.Voice.AsString() != "cedar" || res.Delegation.AcknowledgementDelayMs != 400 {
		t.Errorf("session as started: %s", res.RawJSON())
	}
	st, _ := s.LiveSession(call.ID)
	if got := st.AllowedClientEvents; len(got) != 2 || got[0] != "session.input_audio.mute" || got[1] != "session.input_audio.unmute" {
		t.Errorf("phone's allowed client events %v", got)
	}

	if err := phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	created, _ := next(t, ctx, sb, "session.delegation.created")
	id := created.AsDelegationCreatedEvent().Delegation.ID
	if err := sb.Think(ctx, id, "Looking through recipes.", "t1"); err != nil {
		t.Fatal(err)
	}
	if ev, _ := next(t, ctx, sb, "session.thinking.appended"); ev.AsThinkingAppendedEvent().ClientEventID != "t1" {
		t.Errorf("thinking.appended %s", ev.RawJSON())
	}
	if err := sb.Comment(ctx, id, "Pasta al pomodoro takes twenty minutes.", "c1"); err != nil {
		t.Fatal(err)
	}
	next(t, ctx, sb, "session.commentary.appended")
	if err := sb.Instruct(ctx, "", "The call ends in one minute.", "i1"); err != nil {
		t.Fatal(err)
	}
	next(t, ctx, sb, "session.instructions.appended")
	if err := sb.CloseSession(ctx); err != nil {
		t.Fatal(err)
	}
	closed, _ := next(t, ctx, sb, "session.closed")
	if r := closed.AsSessionClosedEvent().Reason; r != "close_requested" {
		t.Errorf("closed: %s", closed.RawJSON())
	}
	st, _ = s.LiveSession(call.ID)
	if len(st.Applied) != 4 || *st.Applied[0].DelegationID != id || st.Applied[1].Content != "Pasta al pomodoro takes twenty minutes." ||
		st.Applied[2].DelegationID != nil || st.Applied[3].Type != "session.close" {
		t.Errorf("the sim applied %+v", st.Applied)
	}
}

// TestLiveReflectedAudioDiscarded: Next never returns the audio copies, and
// counts what it skipped.
func TestLiveReflectedAudioDiscarded(t *testing.T) {
	t.Parallel()
	_, c := newLiveClient(t, sim.Live{ReflectAudio: true})
	ctx := liveCtx(t)
	_, _, sb := startLive(t, ctx, c, realtime.LiveSession{Model: "gpt-live-1"})
	// The sim's reflect and usage tickers both run at 100 ms and a loaded
	// machine can deliver several usage events before the first copy, so
	// events are read until a copy has been skipped; liveCtx bounds the wait.
	for {
		_, seen := next(t, ctx, sb, "session.usage.updated")
		for _, typ := range seen {
			if typ == "session.input_audio.append" || typ == "session.output_audio.delta" {
				t.Fatalf("Next returned %s", typ)
			}
		}
		if n, _ := sb.Discarded(); n > 0 {
			break
		}
	}
	if n, bytes := sb.Discarded(); bytes < n*6400 {
		t.Errorf("discarded %d events, %d bytes", n, bytes)
	}
}

// TestLiveCreateFailures: create failures reach the caller as the one error
// type, through the classifier.
func TestLiveCreateFailures(t *testing.T) {
	t.Parallel()
	s, c := newLiveClient(t, sim.Live{})
	ctx := liveCtx(t)
	offer, err := simtest.NewCaller(t).Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind sim.FaultKind
		code apierr.Code
	}{{sim.FaultRateLimit, apierr.AIRateLimited}, {sim.FaultServerError, apierr.AIUnavailable},
		{sim.FaultUnavailable, apierr.AIUnavailable}, {sim.FaultSDPReject, apierr.Validation}} {
		if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointLiveSessions, Kind: tc.kind}); err != nil {
			t.Fatal(err)
		}
		_, err := c.CreateLive(ctx, offer, realtime.LiveSession{Model: "gpt-live-1"})
		if got := apierr.CodeOf(err); got != tc.code {
			t.Errorf("%s: code %q (%v), want %q", tc.kind, got, err, tc.code)
		}
	}
}

// TestAttachLiveNotFound: an unknown session is ErrLiveNotFound; a window
// of refused attaches right after creation is waited out.
func TestAttachLiveNotFound(t *testing.T) {
	t.Parallel()
	s, c := newLiveClient(t, sim.Live{})
	ctx := liveCtx(t)
	if _, err := c.AttachLive(ctx, "live_nope"); !errors.Is(err, realtime.ErrLiveNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := c.AttachLive(ctx, "../x"); err == nil {
		t.Error("an id that is not one was dialled")
	}
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultSidebandNotFound, Count: 2}); err != nil {
		t.Fatal(err)
	}
	startLive(t, ctx, c, realtime.LiveSession{Model: "gpt-live-1"})
	if got := s.Stats().Endpoints[sim.EndpointLiveAttach].FaultsServed; got != 2 {
		t.Errorf("attach faults served %d, want 2", got)
	}
}
