package sim_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/live"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/voxgate/voxgate/sim"
)

// TestLiveAcknowledgementDelay: the automatic acknowledgement waits its
// delay on the session clock, and any thinking or commentary cancels it.
func TestLiveAcknowledgementDelay(t *testing.T) {
	t.Parallel()
	// 10 s on a clock 10 times real time: the thinking has a whole real
	// second to arrive first, however loaded the machine.
	s, base := newLiveSim(t, sim.Live{ClockRate: 10})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, func(offer string) live.LiveNewParams { return liveParams(offer, 10000) })

	// Turn 1: thinking arrives before the delay runs out: no "one moment".
	if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	created, _ := until(t, ctx, c.sb, "session.delegation.created")
	d1 := created.AsDelegationCreatedEvent()
	think := live.ConnectClientEventParamOfSessionThinkingAppend("Searching recipes.", d1.Delegation.ID)
	think.OfSessionThinkingAppend.EventID = openai.String("t1")
	if err := c.sb.Send(ctx, think); err != nil {
		t.Fatal(err)
	}
	appended, seen := until(t, ctx, c.sb, "session.thinking.appended")
	if a := appended.AsThinkingAppendedEvent(); a.ClientEventID != "t1" {
		t.Errorf("thinking.appended %s", a.RawJSON())
	}
	// Turn 2, no append: the acknowledgement comes 10 s (session clock)
	// after the delegation, and the cancelled one never does.
	if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	created, more := until(t, ctx, c.sb, "session.delegation.created")
	seen = append(seen, more...)
	d2 := created.AsDelegationCreatedEvent()
	ack := spoken(t, ctx, c.sb, "One moment.")
	if ack.StartMs < d2.OffsetMs+10000 {
		t.Errorf("acknowledgement at %d, before the delegation at %d + 10000", ack.StartMs, d2.OffsetMs)
	}
	for _, e := range seen {
		if e.Type == "session.output_transcript.delta" {
			t.Errorf("spoken before the second delegation's acknowledgement: %s", e.RawJSON())
		}
	}
	if st, _ := s.LiveSession(c.id); st.Acknowledgements != 1 {
		t.Errorf("acknowledgements %d, want 1", st.Acknowledgements)
	}
}

// TestLiveSidebandCommands: appends and session.update from the sideband,
// and the refusals each gets (sent to the sender only, nothing applied).
func TestLiveSidebandCommands(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, defaultParams)
	if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	created, _ := until(t, ctx, c.sb, "session.delegation.created")
	id := created.AsDelegationCreatedEvent().Delegation.ID
	refusals := []struct {
		name, raw, code, param string
	}{
		{"too long", `{"type":"session.commentary.append","event_id":"r1","delegation_id":"` + id + `","content":"` + strings.Repeat("word ", 401) + `"}`, "invalid_value", "content"},
		{"unknown delegation", `{"type":"session.thinking.append","event_id":"r2","delegation_id":"item_nope","content":"x"}`, "invalid_value", "delegation_id"},
		{"delegation_id left out", `{"type":"session.instructions.append","event_id":"r3","content":"x"}`, "missing_required_parameter", "delegation_id"},
		{"unknown field", `{"type":"session.commentary.append","event_id":"r4","delegation_id":null,"content":"x","voice":"ash"}`, "unknown_parameter", "voice"},
		{"immutable model", `{"type":"session.update","event_id":"r5","session":{"model":"gpt-live-1"}}`, "immutable_field_update", "session.model"},
		{"immutable voice", `{"type":"session.update","event_id":"r6","session":{"audio":{"output":{"voice":"ash"}}}}`, "immutable_field_update", "session.audio"},
		{"delegation type", `{"type":"session.update","event_id":"r7","session":{"delegation":{"type":"responses"}}}`, "immutable_field_update", "session.delegation.type"},
		{"not JSON", `{"type":`, "invalid_json", ""},
		{"unknown type", `{"type":"session.nope","event_id":"r9"}`, "invalid_value", "type"},
	}
	for _, r := range refusals {
		if err := c.sb.SendRaw(ctx, []byte(r.raw)); err != nil {
			t.Fatal(err)
		}
		e, _ := until(t, ctx, c.sb, "error")
		le := e.AsErrorEvent().Error
		if le.Code != r.code || le.Param != r.param || le.Message == "" {
			t.Errorf("%s: error %s", r.name, e.RawJSON())
		}
	}
	// Session-wide instructions (an explicit null) and a new delay apply.
	instr := live.ConnectClientEventUnionParam{OfSessionInstructionsAppend: &live.InstructionsAppendEventParam{
		DelegationID: param.Null[string](), Content: "The session ends in one minute.", EventID: openai.String("i1")}}
	if err := c.sb.Send(ctx, instr); err != nil {
		t.Fatal(err)
	}
	if e, _ := until(t, ctx, c.sb, "session.instructions.appended"); e.AsInstructionsAppendedEvent().ClientEventID != "i1" {
		t.Errorf("instructions.appended %s", e.RawJSON())
	}
	update := live.ConnectClientEventParamOfSessionUpdate(live.SessionUpdateConfigParam{
		Delegation: live.SessionUpdateConfigDelegationUnionParam{OfClient: &live.ClientDelegationParam{AcknowledgementDelayMs: openai.Int(700)}}})
	if err := c.sb.Send(ctx, update); err != nil {
		t.Fatal(err)
	}
	updated, _ := until(t, ctx, c.sb, "session.updated")
	if d := updated.AsSessionUpdatedEvent().Session.Delegation; d.AcknowledgementDelayMs != 700 {
		t.Errorf("session.updated delegation %s", d.RawJSON())
	}
	st, _ := s.LiveSession(c.id)
	if len(st.Applied) != 2 || st.Applied[0].DelegationID != nil || st.Applied[1].Type != "session.update" {
		t.Errorf("applied %+v, want the null-delegation instructions and the update", st.Applied)
	}
}

// TestLiveRules: a rule's text is answered by the voice model itself, and a
// rule may send the delegation before the transcript it comes from.
func TestLiveRules(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{
		Said: []string{"hello there", "find me a recipe"},
		Rules: []sim.LiveRule{
			{When: sim.When{Contains: []string{"hello"}}, Reply: sim.LiveReply{Text: "Hi! What shall we cook?"}},
			{When: sim.When{Matches: "recipe$"}, Reply: sim.LiveReply{DelegationFirst: true}},
		},
	})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, defaultParams)
	if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	spoken(t, ctx, c.sb, "Hi! What shall we cook?")
	if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	_, seen := until(t, ctx, c.sb, "session.delegation.created")
	for _, e := range seen {
		if e.Type == "session.input_transcript.delta" && strings.Contains("find me a recipe", e.AsInputTranscriptDeltaEvent().Delta) {
			t.Errorf("the second turn's transcript came before its delegation: %s", e.RawJSON())
		}
	}
	e, _ := until(t, ctx, c.sb, "session.input_transcript.delta")
	if e.AsInputTranscriptDeltaEvent().Delta != "find" {
		t.Errorf("after the delegation: %s", e.RawJSON())
	}
	if st, _ := s.LiveSession(c.id); len(st.Delegations) != 1 || st.Turns != 2 {
		t.Errorf("delegations %v turns %d, want one delegation in two turns", st.Delegations, st.Turns)
	}
}

// TestLiveReflectedAudio: with reflect_audio, sidebands get 100 ms copies of
// both streams, base64 PCM16 at 24 kHz; the phone never does.
func TestLiveReflectedAudio(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{ReflectAudio: true})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, defaultParams)
	in, _ := until(t, ctx, c.sb, "session.input_audio.append")
	out, _ := until(t, ctx, c.sb, "session.output_audio.delta")
	pcm, err := base64.StdEncoding.DecodeString(in.AsConnectServerEventSessionInputAudioAppend().Audio)
	if err != nil || len(pcm) != 4800 {
		t.Errorf("input copy: %d bytes, %v; want 100 ms of PCM16 at 24 kHz (4800)", len(pcm), err)
	}
	d := out.AsOutputAudioDeltaEvent()
	if pcm, err := base64.StdEncoding.DecodeString(d.Delta); err != nil || len(pcm) != 4800 || d.EndMs <= d.StartMs {
		t.Errorf("output copy: %d bytes over [%d, %d]", len(pcm), d.StartMs, d.EndMs)
	}
	if st, _ := s.LiveSession(c.id); st.ReflectedAudioBytes < 2*6400 {
		t.Errorf("reflected %d bytes", st.ReflectedAudioBytes)
	}
}
