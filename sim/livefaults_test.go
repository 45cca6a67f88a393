package sim_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/live"
	"github.com/openai/openai-go/v3/option"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

func defaultParams(offer string) live.LiveNewParams { return liveParams(offer, 0) }

// TestLiveAttachNotFoundWindow: right after creation the attach may be
// refused; the window here is two attempts, then the sideband connects.
func TestLiveAttachNotFoundWindow(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, defaultParams)
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultSidebandNotFound, Count: 2}); err != nil {
		t.Fatal(err)
	}
	client := simtest.Client(base)
	for i := range 2 {
		_, err := client.Live.Sideband.Connect(ctx, c.id, live.SidebandConnectionOptions{}, option.WithQuery("graceful_close", "false"))
		if err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("attach %d in the window: %v, want a 404", i+1, err)
		}
	}
	sb, err := client.Live.Sideband.Connect(ctx, c.id, live.SidebandConnectionOptions{}, option.WithQuery("graceful_close", "false"))
	if err != nil {
		t.Fatalf("attach after the window: %v", err)
	}
	defer sb.Abort()
	resp, body := do(t, http.MethodGet, base+"/v1/live/sessions/live_nope/attach", simtest.TestKey, "", nil)
	if _, code, _, _ := apiError(t, body); resp.StatusCode != 404 || code != "session_not_found" {
		t.Errorf("unknown session: %d %s", resp.StatusCode, body)
	}
	testkit.Eventually(t, ctx, "the second sideband to join", func() bool {
		st, _ := s.LiveSession(c.id)
		return st.Sidebands == 2
	})
}

// TestLiveSidebandCut: a cut sideband loses its socket, not the session;
// a new attach replays nothing and sees what happens next.
func TestLiveSidebandCut(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{Said: []string{"first question", "second question"}})
	ctx := testCtx(t)
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultSidebandDrop, AfterChunks: 2}); err != nil {
		t.Fatal(err)
	}
	c := dialLive(t, ctx, s, base, defaultParams)
	if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.sb.Recv(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if ev, err := c.sb.Recv(ctx); err == nil {
		t.Fatalf("after the cut: %s", ev.RawJSON())
	}
	// The session goes on; the first turn's events are not replayed.
	testkit.Eventually(t, ctx, "the first turn's delegation", func() bool {
		st, _ := s.LiveSession(c.id)
		return len(st.Delegations) == 1
	})
	// The sim joins an attach to its session just after the upgrade
	// answers it: what counts is what comes once it has joined.
	before, _ := s.LiveSession(c.id)
	sb := attach(t, ctx, base, c.id, "false")
	testkit.Eventually(t, ctx, "the new sideband to join", func() bool {
		st, _ := s.LiveSession(c.id)
		return st.Sidebands == before.Sidebands+1
	})
	// The next turn's audio goes again every half second until its
	// transcript comes: a packet lost on a loaded machine leaves a turn
	// short of its five, and the check here is what the re-attached
	// sideband hears first, not the media.
	stop := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		for {
			if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	first, seen := until(t, ctx, sb, "session.input_transcript.delta")
	close(stop)
	<-sent
	for _, e := range seen[:len(seen)-1] {
		if e.Type != "session.usage.updated" {
			t.Errorf("re-attached sideband got %s before the next turn", e.RawJSON())
		}
	}
	if d := first.AsInputTranscriptDeltaEvent().Delta; d != "second" {
		t.Errorf("re-attached sideband's first transcript: %q, want the second turn's", d)
	}
	if st, _ := s.LiveSession(c.id); st.Status != "active" {
		t.Errorf("the cut closed the session: %s", st.CloseReason)
	}
}

// TestLiveGracefulClose: closing a sideband attached without
// graceful_close=false closes the session; other sidebands see it closed.
func TestLiveGracefulClose(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, defaultParams)
	sb := attach(t, ctx, base, c.id, "")
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	closed, _ := until(t, ctx, c.sb, "session.closed")
	if r := closed.AsSessionClosedEvent().Reason; r != "close_requested" {
		t.Errorf("reason %q", r)
	}
	testkit.Eventually(t, ctx, "the session closed", func() bool {
		st, _ := s.LiveSession(c.id)
		return st.Status == "closed"
	})
}

// TestLiveCloseReasons: expiry, the content filter and the phone leaving
// each close the session with the API's reason and the final usage.
func TestLiveCloseReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reason string
		fault  *sim.Fault
		act    func(*liveCall) error
	}{
		// 30 s on a clock 10 times real time: 3 s, time for the phone and
		// the sideband to connect first.
		{reason: "expired", fault: &sim.Fault{Endpoint: sim.EndpointLiveSessions, Kind: sim.FaultExpired, IntervalMS: 30000}},
		{reason: "content", fault: &sim.Fault{Endpoint: sim.EndpointLiveSessions, Kind: sim.FaultContentFilter},
			act: func(c *liveCall) error { return c.phone.SendAudio(context.Background(), 5, 0) }},
		{reason: "remote_hangup", act: func(c *liveCall) error { c.phone.Close(); return nil }},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			t.Parallel()
			s, base := newLiveSim(t, sim.Live{ClockRate: 10})
			ctx := testCtx(t)
			if tc.fault != nil {
				if _, err := s.AddFault(*tc.fault); err != nil {
					t.Fatal(err)
				}
			}
			c := dialLive(t, ctx, s, base, defaultParams)
			if tc.act != nil {
				if err := tc.act(c); err != nil {
					t.Fatal(err)
				}
			}
			closed, _ := until(t, ctx, c.sb, "session.closed")
			ce := closed.AsSessionClosedEvent()
			if string(ce.Reason) != tc.reason || ce.Session.ID != c.id {
				t.Errorf("session.closed %s", ce.RawJSON())
			}
			testkit.Eventually(t, ctx, "the session closed", func() bool {
				st, _ := s.LiveSession(c.id)
				return st.Status == "closed" && st.CloseReason == tc.reason && st.UsageSeconds == ce.Usage.Seconds
			})
		})
	}
}

// TestLiveNeverConnects: a session whose phone never connects closes with
// connection_lost and is billed its 15 s start charge, no more.
func TestLiveNeverConnects(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{ConnectTimeout: 2 * 1e9})
	ctx := testCtx(t)
	offer, err := simtest.NewCaller(t).Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := simtest.Client(base)
	resp, err := client.Live.New(ctx, liveParams(offer, 0)) // the answer is never applied
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, ctx, "the session to give up", func() bool {
		st, _ := s.LiveSession(resp.Session.ID)
		return st.Status == "closed"
	})
	st, _ := s.LiveSession(resp.Session.ID)
	if st.CloseReason != "connection_lost" || st.UsageSeconds != 0 || st.BilledSeconds != 15 || st.ConnectedAt != nil {
		t.Errorf("never connected: reason %q usage %v billed %v connected %v", st.CloseReason, st.UsageSeconds, st.BilledSeconds, st.ConnectedAt)
	}
}

// TestLiveSidebandCutAtClose: the faulted sideband is cut when the
// session closes and never reads session.closed; another sideband reads
// it with the final usage.
func TestLiveSidebandCutAtClose(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{UsageInterval: 200 * time.Millisecond})
	ctx := testCtx(t)
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointLiveAttach, Kind: sim.FaultSidebandCutAtClose}); err != nil {
		t.Fatal(err)
	}
	c := dialLive(t, ctx, s, base, defaultParams) // its sideband draws the fault
	other := attach(t, ctx, base, c.id, "false")
	until(t, ctx, c.sb, "session.usage.updated")
	if err := other.Send(ctx, live.ConnectClientEventUnionParam{OfSessionClose: &live.SessionCloseEventParam{}}); err != nil {
		t.Fatal(err)
	}
	closed, _ := until(t, ctx, other, "session.closed")
	for {
		ev, err := c.sb.Recv(ctx)
		if err != nil {
			break // cut
		}
		if ev.Type == "session.closed" {
			t.Fatalf("the faulted sideband read %s", ev.RawJSON())
		}
	}
	var st sim.LiveStats
	testkit.Eventually(t, ctx, "the session closed", func() bool {
		st, _ = s.LiveSession(c.id)
		return st.Status == "closed"
	})
	final := closed.AsSessionClosedEvent().Usage.Seconds
	if st.UsageSeconds != final || st.UpdatedSeconds <= 0 || st.UpdatedSeconds > final {
		t.Errorf("usage %v, last update %v; session.closed said %v", st.UsageSeconds, st.UpdatedSeconds, final)
	}
}

// attach opens another sideband with openai-go; graceful is the
// graceful_close query ("" leaves it out).
func attach(t *testing.T, ctx context.Context, base, id, graceful string) *live.SidebandConnection {
	t.Helper()
	var opts []option.RequestOption
	if graceful != "" {
		opts = append(opts, option.WithQuery("graceful_close", graceful))
	}
	client := simtest.Client(base)
	sb, err := client.Live.Sideband.Connect(ctx, id, live.SidebandConnectionOptions{}, opts...)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(sb.Abort)
	return sb
}

// TestLiveUsageRegress: with usage_regress, a stale session.usage.updated
// with half the figure follows a real one, decoded by openai-go like any
// other; the stats keep the real figure.
func TestLiveUsageRegress(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{UsageInterval: 5 * time.Second})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, defaultParams)
	first, _ := until(t, ctx, c.sb, "session.usage.updated")
	if _, err := s.AddFault(sim.Fault{Endpoint: sim.EndpointLiveSessions, Kind: sim.FaultUsageRegress, Count: 1}); err != nil {
		t.Fatal(err)
	}
	// The fault may be drawn right after first went out: the stale copy
	// is the first report lower than the one before it.
	real, stale := first.AsSessionUsageUpdatedEvent().Usage.Seconds, 0.0
	for stale == 0 {
		ev, _ := until(t, ctx, c.sb, "session.usage.updated")
		if sec := ev.AsSessionUsageUpdatedEvent().Usage.Seconds; sec < real {
			stale = sec
		} else {
			real = sec
		}
	}
	if st, _ := s.LiveSession(c.id); stale <= 0 || stale*2 > real+0.002 || st.UsageSeconds < real {
		t.Errorf("real %v then stale %v (stats %v); want the stale one half the real", real, stale, st.UsageSeconds)
	}
}
