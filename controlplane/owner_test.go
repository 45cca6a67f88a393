package controlplane_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// Another user's end of a connected call, sent to the replica that holds
// the call and to one that does not, is 404 and touches nothing: the
// holder keeps the call, the provider's call and the phone's connection
// stay up, the session stays open, and its one record is the owner's own
// end, with the owner's reason. In every mode the gateway holds a call.
func TestAnotherUsersEndLeavesTheCall(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{controlplane.ModeSideband, controlplane.ModeRelay, controlplane.ModeLive} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var o options
			switch mode {
			case controlplane.ModeRelay:
				o.relay = true
			case controlplane.ModeLive:
				o.backend, o.simCfg = "gpt-4.1-mini", liveSim(sim.Live{})
			}
			holder := newFixture(t, o)
			other := holder.replica(t)
			alice, bob := newUser(t, "pro"), newUser(t, "pro")
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()

			var start controlplane.StartResponse
			var phone *simtest.Caller
			var up func() bool // the provider's side of the call is still up
			switch mode {
			case controlplane.ModeSideband:
				var callID string
				start, phone, callID = sidebandCall(t, ctx, holder, alice)
				up = func() bool { st, _ := holder.sim.Call(callID); return st.Status == "active" }
			case controlplane.ModeRelay:
				var callID string
				start, phone, _, callID = relayCall(t, ctx, holder, alice)
				up = func() bool { st, _ := holder.sim.Call(callID); return st.Status == "active" }
			case controlplane.ModeLive:
				var liveID string
				start, phone, liveID = liveCall(t, ctx, holder, alice)
				up = func() bool { st, _ := holder.sim.LiveSession(liveID); return st.Status == "active" }
			}

			for _, r := range []struct {
				name string
				f    fixture
			}{{"another replica", other}, {"the holding replica", holder}} {
				name, f := r.name, r.f
				w := call(t, f.svc.HandleEnd, bob, "POST", "/", []byte(`{"reason":"error"}`), start.SessionID)
				if w.Code != http.StatusNotFound || decode[errorBody](t, w).Error.Code != "NOT_FOUND" {
					t.Fatalf("bob's end on %s: %d %s, want 404 NOT_FOUND", name, w.Code, w.Body)
				}
				// A release is synchronous (the end waits for the holder to
				// hang up), so a call it touched is down by now.
				if n := holder.svc.Held(); n != 1 {
					t.Fatalf("after bob's end on %s the holder holds %d calls, want alice's", name, n)
				}
				if !up() {
					t.Fatalf("after bob's end on %s the provider's call is down", name)
				}
				if s := phone.PC.ConnectionState(); s != webrtc.PeerConnectionStateConnected {
					t.Fatalf("after bob's end on %s alice's phone is %s", name, s)
				}
				if s := getSession(t, holder, alice, start.SessionID); !s.Active() {
					t.Fatalf("after bob's end on %s alice's session ended: %+v", name, s)
				}
			}

			w := call(t, holder.svc.HandleEnd, alice, "POST", "/", []byte(`{"reason":"app_closed"}`), start.SessionID)
			if w.Code != http.StatusOK {
				t.Fatalf("alice's end: %d %s", w.Code, w.Body)
			}
			ended := decode[controlplane.Session](t, w)
			if ended.EndReason == nil || *ended.EndReason != controlplane.ReasonAppClosed || ended.Cost == nil ||
				ended.Cost.UserID != alice.UserID {
				t.Fatalf("alice's ended session: %+v, want her own app_closed end and record", ended)
			}
			var records int
			if err := holder.pool.QueryRow(ctx, `SELECT count(*) FROM usage_records WHERE session_id = $1`, start.SessionID).Scan(&records); err != nil {
				t.Fatal(err)
			}
			if records != 1 {
				t.Fatalf("%d records for the session, want 1", records)
			}
		})
	}
}

func getSession(t *testing.T, f fixture, p auth.Principal, id string) controlplane.Session {
	t.Helper()
	w := call(t, f.svc.HandleGet, p, "GET", "/", nil, id)
	if w.Code != http.StatusOK {
		t.Fatalf("get %s: %d %s", id, w.Code, w.Body)
	}
	return decode[controlplane.Session](t, w)
}
