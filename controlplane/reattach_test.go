package controlplane_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// sockets carries the realtime client's requests and keeps every
// WebSocket it opens, so a test can cut the provider's sockets under the
// holder, without a close frame, at the moment it chooses: the sim's drop
// fault strikes after a count of events fixed when the socket opens.
type sockets struct {
	mu    sync.Mutex
	conns []io.Closer
}

func (s *sockets) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && res.StatusCode == http.StatusSwitchingProtocols {
		if c, ok := res.Body.(io.Closer); ok { // an upgraded body is the connection
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}
	return res, err
}

// cut closes every socket opened so far.
func (s *sockets) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

// refuseAttaches makes every attach on endpoint find no call (404), as the
// provider answers for a while after a drop, and returns how to count
// them.
func refuseAttaches(t *testing.T, s *sim.Server, endpoint string) (served func() int) {
	t.Helper()
	f, err := s.AddFault(sim.Fault{Endpoint: endpoint, Kind: sim.FaultSidebandNotFound, Fraction: 1})
	if err != nil {
		t.Fatal(err)
	}
	return func() int {
		for _, g := range s.Faults() {
			if g.ID == f.ID {
				return g.Served
			}
		}
		return -1
	}
}

// attachFor keeps the holder attaching again for longer than any test
// waits, so the shutdown comes during it.
func attachFor(c *config.Voice) { c.AttachWithin = time.Minute }

// The replica shuts down while its holder is attaching again after a drop:
// the holder saves the usage it read before the drop and leaves the session
// open, as a shutdown does at any other moment (holder.go, Close), and the
// replica that adopts it ends it with that usage on the record. Before one
// loop held both modes, the sideband holder returned from the failed attach
// without saving: the first response's usage was lost.
func TestSidebandShutdownDuringReattach(t *testing.T) {
	t.Parallel()
	socks := &sockets{}
	a := newFixture(t, options{rtTransport: socks, configFn: attachFor,
		simCfg: sim.Config{Script: phoneScript(), Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	p := newUser(t, "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start, phone, callID := sidebandCall(t, ctx, a, p)
	if err := phone.SendAudio(ctx, 75, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// The first response is the tool call: the holder has read its
	// response.done once its output is back, before the second can start.
	var first, both, transcription rtUsage
	for done := 0; done < 2; {
		ev, err := phone.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if usageEvent(t, ev, &both, &transcription) {
			if done++; done == 1 {
				first = both
			}
		}
	}
	if st, _ := a.sim.Call(callID); st.ToolOutputs[sim.PathSideband] != 1 || first.InputTokenDetails.TextTokens == 0 {
		t.Fatalf("sim %+v, first response's usage %+v: want the call answered, with text input", st, first)
	}

	refused := refuseAttaches(t, a.sim, sim.EndpointRealtime)
	socks.cut()
	testkit.Eventually(t, ctx, "the holder attaching again", func() bool { return refused() >= 1 })
	a.svc.Close()

	if s := getSession(t, a, p, start.SessionID); !s.Active() {
		t.Fatalf("the session ended %s on a shutdown; want it left for another replica", *s.EndReason)
	}
	if st, _ := a.sim.Call(callID); st.Status != "active" {
		t.Fatalf("the call %s; want it up for the adopter", st.Status)
	}
	var saved struct{ Session struct{ TextIn int64 } }
	savedUsage(t, ctx, a, start.SessionID, &saved)
	if saved.Session.TextIn < first.InputTokenDetails.TextTokens {
		t.Fatalf("saved text input %d; want at least the first response's %d", saved.Session.TextIn, first.InputTokenDetails.TextTokens)
	}

	a.sim.ClearFaults()
	b := a.replica(t)
	runReplica(t, b.svc)
	lapse(t, ctx, b.pool, start.SessionID)
	waitHeld(t, ctx, a, callID, 2)
	ended := decode[controlplane.Session](t, call(t, b.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID))
	if ended.Cost == nil || ended.Cost.Tokens.TextIn < first.InputTokenDetails.TextTokens {
		t.Fatalf("the adopter's record %+v; want the first response's %d text input on it", ended.Cost, first.InputTokenDetails.TextTokens)
	}
}

// The same in mode live: the holder saves what it held (the delegation's
// backend tokens and the transcript its task was read from) and leaves the
// session open, and the adopter's record has the backend tokens. Before one
// loop held both modes, the cancelled attach counted as the provider
// refusing it: the live holder closed the session and ended it `error`.
func TestLiveShutdownDuringReattach(t *testing.T) {
	t.Parallel()
	socks := &sockets{}
	a := newFixture(t, options{rtTransport: socks, configFn: attachFor, backend: "gpt-4.1-mini",
		simCfg: oneTurn(liveScript(), simtest.ZeroLatency())})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, start, liveID := askLive(t, ctx, a)
	// The holder adds a delegation's tokens before it sends its answer.
	waitAppended(t, ctx, a, liveID, "session.commentary.append")

	refused := refuseAttaches(t, a.sim, sim.EndpointLiveAttach)
	socks.cut()
	testkit.Eventually(t, ctx, "the holder attaching again", func() bool { return refused() >= 1 })
	a.svc.Close()

	if s := getSession(t, a, p, start.SessionID); !s.Active() {
		t.Fatalf("the session ended %s on a shutdown; want it left for another replica", *s.EndReason)
	}
	if st, _ := a.sim.LiveSession(liveID); st.Status != "active" {
		t.Fatalf("the live session %s (%s); want it up for the adopter", st.Status, st.CloseReason)
	}
	var saved struct {
		Backend    struct{ TextOut int64 }
		Transcript []controlplane.LiveLine
	}
	savedUsage(t, ctx, a, start.SessionID, &saved)
	heard := false
	for _, l := range saved.Transcript {
		heard = heard || (l.Speaker == "user" && strings.Contains(l.Text, "pasta"))
	}
	if saved.Backend.TextOut == 0 || !heard {
		t.Fatalf("saved %+v; want the delegation's backend tokens and the user's words", saved)
	}

	a.sim.ClearFaults()
	b := newFixture(t, options{url: a.url, sim: a.sim, simURL: a.simURL, backend: "gpt-4.1-mini"})
	runReplica(t, b.svc)
	lapse(t, ctx, b.pool, start.SessionID)
	testkit.Eventually(t, ctx, "the adopter's sideband", func() bool {
		st, _ := a.sim.LiveSession(liveID)
		return st.Sidebands >= 2 // a's refused attaches opened none
	})
	ended := decode[controlplane.Session](t, call(t, b.svc.HandleEnd, p, "POST", "/", []byte(`{}`), start.SessionID))
	if ended.Cost == nil || ended.Cost.Tokens.BackendTextOut != saved.Backend.TextOut {
		t.Fatalf("the adopter's record %+v; want the saved %d backend output tokens", ended.Cost, saved.Backend.TextOut)
	}
}

// savedUsage decodes the usage the session's row holds into v.
func savedUsage(t *testing.T, ctx context.Context, f fixture, id string, v any) {
	t.Helper()
	var raw []byte
	if err := f.pool.QueryRow(ctx, `SELECT observed FROM voice_sessions WHERE id = $1`, id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw == nil {
		t.Fatal("no usage saved on the session's row")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}
