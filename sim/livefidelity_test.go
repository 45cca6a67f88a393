package sim_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/live"
	"github.com/voxgate/voxgate/sim"
)

// liveSentTypes is every server event type the simulator sends on a Live
// session; TestLiveEventsDecodeWithOpenAI must see each.
var liveSentTypes = []string{"session.started", "session.updated", "session.input_audio.muted",
	"session.input_audio.unmuted", "session.instructions.appended", "session.thinking.appended",
	"session.commentary.appended", "session.input_audio.append", "session.output_audio.delta",
	"session.input_transcript.delta", "session.output_transcript.delta", "session.delegation.created",
	"session.usage.updated", "session.closed", "error"}

// TestLiveEventsDecodeWithOpenAI drives one session through every event
// type the simulator sends and decodes each, as sent, with openai-go's
// live.ServerEventUnion (the data channel's) and live.ConnectServerEventUnion
// (the sideband's), failing on any field openai-go cannot decode as its
// declared type and on any required field it finds missing.
func TestLiveEventsDecodeWithOpenAI(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{ReflectAudio: true})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, func(offer string) live.LiveNewParams {
		p := liveParams(offer, 0)
		p.Session.Client = live.ClientConfigParam{} // the phone may send and see everything
		return p
	})
	var raws [][]byte
	phone, err := c.phone.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raws = append(raws, phone.Raw) // session.started
	if err := c.phone.Send(map[string]any{"type": "session.input_audio.mute"}); err != nil {
		t.Fatal(err)
	}
	if err := c.phone.Send(map[string]any{"type": "session.input_audio.unmute"}); err != nil {
		t.Fatal(err)
	}
	var delegation string
	seen := map[string]bool{}
	next := func(typ string) {
		for !seen[typ] {
			raw, err := c.sb.RecvRaw(ctx)
			if err != nil {
				t.Fatalf("waiting for %s: %v", typ, err)
			}
			raws = append(raws, raw)
			var head struct {
				Type       string `json:"type"`
				Delegation struct{ ID string }
			}
			_ = json.Unmarshal(raw, &head)
			seen[head.Type] = true
			if head.Delegation.ID != "" {
				delegation = head.Delegation.ID
			}
		}
	}
	// The audio goes out only once the unmute is applied: the data channel
	// and the media track are separate transports, and audio heard while
	// muted makes no turn.
	next("session.input_audio.muted")
	next("session.input_audio.unmuted")
	if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"session.delegation.created",
		"session.input_transcript.delta", "session.output_transcript.delta", "session.input_audio.append",
		"session.output_audio.delta", "session.usage.updated"} {
		next(typ)
	}
	send := func(ev live.ConnectClientEventUnionParam) {
		if err := c.sb.Send(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	send(live.ConnectClientEventParamOfSessionThinkingAppend("Looking.", delegation))
	next("session.thinking.appended")
	send(live.ConnectClientEventParamOfSessionCommentaryAppend("Found one.", delegation))
	next("session.commentary.appended")
	send(live.ConnectClientEventParamOfSessionInstructionsAppend("Be brief.", delegation))
	next("session.instructions.appended")
	send(live.ConnectClientEventParamOfSessionUpdate(live.SessionUpdateConfigParam{Delegation: live.SessionUpdateConfigDelegationUnionParam{
		OfClient: &live.ClientDelegationParam{AcknowledgementDelayMs: openai.Int(100)}}}))
	next("session.updated")
	if err := c.sb.SendRaw(ctx, []byte(`{"type":"session.update","session":{"model":"x"}}`)); err != nil {
		t.Fatal(err)
	}
	next("error")
	send(live.ConnectClientEventUnionParam{OfSessionClose: &live.SessionCloseEventParam{}})
	next("session.closed")

	decoded := map[string]bool{}
	for _, raw := range raws {
		var u live.ServerEventUnion
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Errorf("openai-go ServerEventUnion: %v: %s", err, raw)
			continue
		}
		checkLiveVariant(t, u.Type, u.AsAny(), raw)
		var cu live.ConnectServerEventUnion
		if err := json.Unmarshal(raw, &cu); err != nil {
			t.Errorf("openai-go ConnectServerEventUnion: %v: %s", err, raw)
			continue
		}
		checkLiveVariant(t, cu.Type, cu.AsAny(), raw)
		decoded[u.Type] = true
	}
	for _, typ := range liveSentTypes {
		if !decoded[typ] {
			t.Errorf("the scenario never produced %s", typ)
		}
	}
	for typ := range decoded {
		if !slices.Contains(liveSentTypes, typ) {
			t.Errorf("%s is sent but not in liveSentTypes", typ)
		}
	}
}

func checkLiveVariant(t *testing.T, typ string, v any, raw []byte) {
	t.Helper()
	if v == nil {
		t.Errorf("%s: openai-go has no variant for this type", typ)
		return
	}
	for _, p := range decodeProblems(reflect.ValueOf(v), typ, false) {
		t.Errorf("openai-go decoding %s: %s\n%s", typ, p, raw)
	}
}

// TestLiveDecodeCheckFails shows the check above can fail: a wrong type and
// a missing required field are both reported.
func TestLiveDecodeCheckFails(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`{"type":"session.usage.updated","event_id":"e","usage":{"seconds":"many"}}`:                                              "usage.seconds: not a valid float64",
		`{"type":"session.delegation.created","event_id":"e","delegation":{"id":"item_1","type":"delegation","target":"client"}}`: "offset_ms: required but missing",
	} {
		var u live.ConnectServerEventUnion
		if err := json.Unmarshal([]byte(raw), &u); err != nil {
			t.Fatal(err)
		}
		problems := decodeProblems(reflect.ValueOf(u.AsAny()), u.Type, false)
		if len(problems) != 1 || !strings.Contains(problems[0], want) {
			t.Errorf("%s: problems %q, want one with %q", raw, problems, want)
		}
	}
}
