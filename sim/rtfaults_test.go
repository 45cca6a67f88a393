package sim_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeFaults covers the Realtime fault kinds end to end.
func TestRealtimeFaults(t *testing.T) {
	t.Parallel()

	t.Run("sdp_reject", func(t *testing.T) {
		t.Parallel()
		s, base := newRealtimeSim(t, sim.Realtime{})
		addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtimeCalls, Kind: sim.FaultSDPReject})
		_, err := simtest.NewCaller(t).DialMultipart(testCtx(t), base, simtest.TestKey, recipeSession)
		if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "invalid_offer") {
			t.Fatalf("dial: %v, want 400 invalid_offer", err)
		}
		if got := s.Stats().Endpoints[sim.EndpointRealtimeCalls].FaultsByKind[sim.FaultSDPReject]; got != 1 {
			t.Errorf("faults served = %d, want 1", got)
		}
	})

	t.Run("calls rate_limit", func(t *testing.T) {
		t.Parallel()
		s, base := newRealtimeSim(t, sim.Realtime{})
		addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtimeCalls, Kind: sim.FaultRateLimit})
		_, err := simtest.NewCaller(t).DialMultipart(testCtx(t), base, simtest.TestKey, recipeSession)
		if err == nil || !strings.Contains(err.Error(), "429") {
			t.Fatalf("dial: %v, want 429", err)
		}
	})

	t.Run("datachannel_close", func(t *testing.T) {
		t.Parallel()
		s, base := newRealtimeSim(t, sim.Realtime{})
		addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtimeCalls, Kind: sim.FaultDataChannelClose, AfterChunks: 3})
		ctx := testCtx(t)
		c, id := dialCall(t, ctx, base, "multipart+apikey")
		// session.created, then two events the audio turn causes.
		if err := c.SendAudio(ctx, 50, 0); err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			if _, err := c.Next(ctx); errors.Is(err, simtest.ErrClosed) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 3 {
			t.Errorf("got %d events before the channel closed, want 3", n)
		}
		if st, _ := s.Call(id); st.Status != "active" {
			t.Errorf("call status = %q after the data channel closed, want active", st.Status)
		}
	})

	t.Run("sideband_drop", func(t *testing.T) {
		t.Parallel()
		s, base := newRealtimeSim(t, sim.Realtime{})
		ctx := testCtx(t)
		c, id := dialCall(t, ctx, base, "multipart+apikey")
		addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtime, Kind: sim.FaultSidebandDrop, AfterChunks: 2})
		sb, _, err := simtest.DialSocket(ctx, base, simtest.TestKey, "call_id="+id)
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		if err := c.SendAudio(ctx, 50, 0); err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			if _, err := sb.Next(ctx); errors.Is(err, simtest.ErrClosed) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			n++
		}
		var ce *websocket.CloseError
		if n != 2 || !errors.As(sb.Err(), &ce) || ce.Code != websocket.CloseAbnormalClosure {
			t.Errorf("sideband: %d events then %v; want 2 then an abnormal close (no close frame)", n, sb.Err())
		}
		// The call goes on: the data channel still gets the tool call.
		expect(t, ctx, c, "response.function_call_arguments.done")
	})

	t.Run("no_response", func(t *testing.T) {
		t.Parallel()
		s, base := newRealtimeSim(t, sim.Realtime{})
		ctx := testCtx(t)
		c, _ := dialCall(t, ctx, base, "multipart+apikey")
		expect(t, ctx, c, "session.created")
		addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtimeCalls, Kind: sim.FaultNoResponse})
		for _, ev := range []string{"response.create", "input_audio_buffer.clear"} {
			if err := c.Send(map[string]any{"type": ev}); err != nil {
				t.Fatal(err)
			}
		}
		if e, err := c.Next(ctx); err != nil || e.Type != "input_audio_buffer.cleared" {
			t.Fatalf("next event = %q (%v), want input_audio_buffer.cleared: response.create must go unanswered", e.Type, err)
		}
		// The fault was used up: the next response.create is answered.
		if err := c.Send(map[string]any{"type": "response.create"}); err != nil {
			t.Fatal(err)
		}
		expect(t, ctx, c, "response.created")
	})

	t.Run("unsupported kind on endpoint", func(t *testing.T) {
		t.Parallel()
		s, _ := newRealtimeSim(t, sim.Realtime{})
		if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointRealtimeClientSecrets, Kind: sim.FaultSDPReject}); err == nil {
			t.Error("sdp_reject accepted on client_secrets")
		}
	})
}

func addFault(t *testing.T, s *sim.Server, f sim.Fault) {
	t.Helper()
	if _, err := s.AddFault(f); err != nil {
		t.Fatal(err)
	}
}

// TestRealtimeClose: Server.Close hangs up every call and socket.
func TestRealtimeClose(t *testing.T) {
	t.Parallel()
	s, err := sim.New(sim.Config{Latency: simtest.ZeroLatency()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(t, s)
	ctx := testCtx(t)
	c, id := dialCall(t, ctx, srv, "multipart+apikey")
	sb, _, err := simtest.DialSocket(ctx, srv, simtest.TestKey, "call_id="+id)
	if err != nil {
		t.Fatal(err)
	}
	ws, _, err := simtest.DialSocket(ctx, srv, simtest.TestKey, "model=gpt-realtime")
	if err != nil {
		t.Fatal(err)
	}
	onSideband(t, ctx, sb)
	expect(t, ctx, ws, "session.created")
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	select {
	case <-c.ChannelClosed():
	case <-ctx.Done():
		t.Fatal("data channel open after Close")
	}
	for _, sock := range []*simtest.Socket{sb, ws} {
		var ce *websocket.CloseError
		if err := sock.Err(); !errors.As(err, &ce) || ce.Code != websocket.CloseNormalClosure {
			t.Errorf("socket ended with %v, want a normal close", err)
		}
	}
	if calls := s.Calls(); len(calls) != 1 || calls[0].Status != "ended" || calls[0].EndReason != "server_closed" {
		t.Errorf("calls after Close = %+v", calls)
	}
	resp, _ := do(t, http.MethodPost, srv+"/v1/realtime/calls", simtest.TestKey, "application/sdp", []byte("x"))
	if resp.StatusCode == http.StatusCreated {
		t.Error("a call was created after Close")
	}
}

// TestRealtimeSidebandNotFound: the sideband_not_found fault answers the
// first attaches to a live call with 404 call_id_not_found (by count, not
// by time, so the retries need no pause); the third attach gets in.
func TestRealtimeSidebandNotFound(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	s, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	_, id := dialCall(t, ctx, base, "multipart+apikey")
	addFault(t, s, sim.Fault{Endpoint: sim.EndpointRealtime, Kind: sim.FaultSidebandNotFound, Count: 2})
	for attempt := 1; ; attempt++ {
		sb, resp, err := simtest.DialSocket(ctx, base, simtest.TestKey, "call_id="+id)
		if err == nil {
			defer sb.Close()
			onSideband(t, ctx, sb)
			if attempt != 3 {
				t.Errorf("attached on attempt %d, want 3", attempt)
			}
			break
		}
		if resp == nil || attempt > 3 {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		body, _ := io.ReadAll(resp.Body)
		assertAPIError(t, spec, "refused attach", resp, body, http.StatusNotFound, "call_id_not_found", "call_id")
	}
	if st, _ := s.Call(id); st.Sidebands != 1 {
		t.Errorf("sidebands = %d, want 1", st.Sidebands)
	}
}
