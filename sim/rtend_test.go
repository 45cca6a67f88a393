package sim_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/realtime"
	"github.com/voxgate/voxgate/sim/simtest"
)

// TestRealtimeSessionExpires: at Realtime.MaxSession every transport gets
// the session_expired error event, sockets close with 1001 and the call
// ends; expires_at says when.
func TestRealtimeSessionExpires(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	s, base := newRealtimeSim(t, sim.Realtime{MaxSession: 2 * time.Second})
	ctx := testCtx(t)
	start := time.Now()
	c, id := dialCall(t, ctx, base, "multipart+apikey")
	created := expectEvent(t, ctx, c, "session.created")
	exp, _ := created.Map()["session"].(map[string]any)["expires_at"].(float64)
	if d := time.Unix(int64(exp), 0).Sub(start); d < time.Second || d > 3*time.Second {
		t.Errorf("expires_at %v after the start, want about 2 s", d)
	}
	sb, _, err := simtest.DialSocket(ctx, base, simtest.TestKey, "call_id="+id)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	ws := dialModelSocket(t, base)

	for name, stream := range map[string]simtest.EventStream{"data channel": c, "sideband": sb, "socket": ws} {
		e := expectEvent(t, ctx, stream, "error")
		if code := errorCode(e); code != "session_expired" {
			t.Errorf("%s: error %s, want session_expired", name, e.Raw)
		}
		if err := spec.Validate("RealtimeServerEventError", e.Raw); err != nil {
			t.Error(err)
		}
		checkOpenAIDecode(t, e)
	}
	if d := time.Since(start); d < 1500*time.Millisecond {
		t.Errorf("expired after %v, want 2 s", d)
	}
	for name, sock := range map[string]*simtest.Socket{"sideband": sb, "socket": ws} {
		var ce *websocket.CloseError
		if err := sock.Err(); !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
			t.Errorf("%s ended with %v, want close 1001", name, err)
		}
	}
	select {
	case <-c.ChannelClosed():
	case <-ctx.Done():
		t.Fatal("data channel open after the session expired")
	}
	waitCall(t, s, id, "session_expired")
}

// TestRealtimeSidebandOutlivesPeer: by default the sideband
// stays open and usable after the caller's peer goes away, though the call
// has ended; without it, the sideband closes with the call.
func TestRealtimeSidebandOutlivesPeer(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{true, false} {
		s, base := newRealtimeSim(t, sim.Realtime{CloseSidebandWithPeer: !keep})
		ctx := testCtx(t)
		c, id := dialCall(t, ctx, base, "multipart+apikey")
		sb, _, err := simtest.DialSocket(ctx, base, simtest.TestKey, "call_id="+id)
		if err != nil {
			t.Fatal(err)
		}
		onSideband(t, ctx, sb)
		c.Close()
		waitCall(t, s, id, "peer_closed")
		if !keep {
			if _, err := sb.Next(ctx); !errors.Is(err, simtest.ErrClosed) {
				t.Errorf("with close_sideband_with_peer: sideband read %v after the peer closed, want it closed", err)
			}
			continue
		}
		if err := sb.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime", "instructions": "still here"}}); err != nil {
			t.Fatal(err)
		}
		expect(t, ctx, sb, "session.updated")
		sb.Close()
	}
}

// waitCall waits until the call has ended for reason.
func waitCall(t *testing.T, s *sim.Server, id, reason string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var st realtime.CallStats
	testkit.Eventually(t, ctx, "the call ended", func() bool {
		st, _ = s.Call(id)
		return st.Status == "ended"
	})
	if st.EndReason != reason {
		t.Errorf("call ended for %q, want %q", st.EndReason, reason)
	}
}

// TestRealtimeStrictAuth: by default the sideband and hangup take a standard
// API key only and an application/sdp offer a client secret only; LaxAuth
// accepts either kind everywhere.
func TestRealtimeStrictAuth(t *testing.T) {
	t.Parallel()
	spec := simtest.Spec(t)
	for _, lax := range []bool{false, true} {
		_, base := newRealtimeSim(t, sim.Realtime{LaxAuth: lax})
		ctx := testCtx(t)
		ek := mint(t, base, recipeSession, 60)
		_, id := dialCall(t, ctx, base, "multipart+apikey")

		want := func(what string, resp *http.Response, body []byte, okStatus int) {
			t.Helper()
			if lax {
				if resp.StatusCode != okStatus {
					t.Errorf("lax: %s: %d %s, want %d", what, resp.StatusCode, body, okStatus)
				}
				return
			}
			assertAPIError(t, spec, "strict: "+what, resp, body, 401, "invalid_api_key", "")
		}
		sb, resp, err := simtest.DialSocket(ctx, base, ek, "call_id="+id)
		if err == nil {
			sb.Close()
		} else if resp == nil {
			t.Fatal(err)
		}
		var body []byte
		if resp.StatusCode != http.StatusSwitchingProtocols {
			body, _ = io.ReadAll(resp.Body) // the refusal's JSON body
		}
		want("sideband with a client secret", resp, body, http.StatusSwitchingProtocols)

		offer, err := simtest.NewCaller(t).Offer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, body = do(t, http.MethodPost, base+"/v1/realtime/calls", simtest.TestKey, "application/sdp", []byte(offer))
		want("application/sdp with an API key", resp, body, 201)

		resp, body = do(t, http.MethodPost, base+"/v1/realtime/calls/"+id+"/hangup", ek, "", nil)
		want("hangup with a client secret", resp, body, 200)
	}
}
