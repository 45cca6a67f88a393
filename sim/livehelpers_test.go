package sim_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/live"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared/constant"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

const liveModel = "gpt-live-1"

// newLiveSim starts a simulator whose Live clock runs 50 times real time,
// with short turns, unless live says otherwise.
func newLiveSim(t *testing.T, lv sim.Live) (*sim.Server, string) {
	t.Helper()
	if lv.ClockRate == 0 {
		lv.ClockRate = 50
	}
	if lv.TurnPackets == 0 {
		lv.TurnPackets = 5
	}
	if lv.ConnectTimeout == 0 {
		// A fast clock makes the default 30 s a fraction of a second of
		// real time, which a loaded machine's ICE may take.
		lv.ConnectTimeout = time.Hour
	}
	return testkit.NewSim(t, sim.Config{Live: lv})
}

// liveParams is the session config a gateway sends: client delegation,
// store off, explicit allowlists that keep the phone to what it needs.
func liveParams(offer string, ackDelayMS int64) live.LiveNewParams {
	return live.LiveNewParams{
		Session: live.MediaSessionConfigParam{
			Model:        liveModel,
			Instructions: openai.String("You are a cooking assistant."),
			Store:        openai.Bool(false),
			Delegation: live.MediaSessionConfigDelegationUnionParam{OfClient: &live.ClientDelegationParam{
				AcknowledgementDelayMs: openai.Int(ackDelayMS)}},
			Audio: live.MediaSessionConfigAudioParam{Output: live.MediaSessionConfigAudioOutputParam{
				Voice: live.MediaSessionConfigAudioOutputVoiceUnionParam{OfBuiltIn: openai.Opt(live.BuiltInVoiceMarin)}}},
			Client: live.ClientConfigParam{DataChannel: live.DataChannelConfigParam{
				AllowedClientEvents: live.DataChannelConfigAllowedClientEventsUnionParam{
					OfArrayOfStrings: []string{"session.input_audio.mute", "session.input_audio.unmute"}},
				AllowedServerEvents: live.DataChannelConfigAllowedServerEventsUnionParam{
					OfEventSelectors: []live.ServerEventSelectorParam{{Type: "session.started"}, {Type: "error"},
						{Type: "session.output_transcript.delta"}, {Type: "session.closed"}}},
			}},
		},
		Transport: live.LiveNewParamsTransport{Sdp: offer},
	}
}

// liveCall is a phone with a Live session and a sideband on it.
type liveCall struct {
	phone *simtest.Caller
	id    string
	sb    *live.SidebandConnection
}

// dialLive creates a session for a loopback pion phone through openai-go's
// client.Live.New, waits for its oai-events channel, and attaches a
// sideband with client.Live.Sideband.Connect.
func dialLive(t *testing.T, ctx context.Context, s *sim.Server, base string, params func(offer string) live.LiveNewParams) *liveCall {
	t.Helper()
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := simtest.Client(base)
	resp, err := client.Live.New(ctx, params(offer))
	if err != nil {
		t.Fatalf("Live.New: %v", err)
	}
	if err := phone.Accept(resp.Transport.Sdp); err != nil {
		t.Fatal(err)
	}
	if err := phone.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	sb, err := client.Live.Sideband.Connect(ctx, resp.Session.ID, live.SidebandConnectionOptions{},
		option.WithQuery("graceful_close", "false"))
	if err != nil {
		t.Fatalf("Sideband.Connect: %v", err)
	}
	t.Cleanup(sb.Abort)
	// The attach returns once upgraded; wait until the session counts it.
	testkit.Eventually(t, ctx, "the sideband to join", func() bool {
		st, _ := s.LiveSession(resp.Session.ID)
		return st.Sidebands >= 1
	})
	return &liveCall{phone: phone, id: resp.Session.ID, sb: sb}
}

// until reads sideband events up to the first of type typ and returns it
// with everything read.
func until(t *testing.T, ctx context.Context, sb *live.SidebandConnection, typ string) (live.ConnectServerEventUnion, []live.ConnectServerEventUnion) {
	t.Helper()
	var seen []live.ConnectServerEventUnion
	for {
		ev, err := sb.Recv(ctx)
		if err != nil {
			t.Fatalf("waiting for %s: %v (saw %v)", typ, err, liveTypes(seen))
		}
		seen = append(seen, ev)
		if ev.Type == typ {
			return ev, seen
		}
	}
}

func liveTypes(evs []live.ConnectServerEventUnion) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// nextPhone returns the phone's next event decoded with openai-go.
func nextPhone(t *testing.T, ctx context.Context, c *simtest.Caller) live.ServerEventUnion {
	t.Helper()
	e, err := c.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var u live.ServerEventUnion
	if err := json.Unmarshal(e.Raw, &u); err != nil {
		t.Fatalf("openai-go: %v: %s", err, e.Raw)
	}
	return u
}

// commentary is the sideband's answer to a delegation.
func commentary(id, content, eventID string) live.ConnectClientEventUnionParam {
	ev := live.ConnectClientEventParamOfSessionCommentaryAppend(content, id)
	ev.OfSessionCommentaryAppend.EventID = openai.String(eventID)
	return ev
}

var _ = constant.ValueOf[constant.All]
