package sim_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/live"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
)

// TestLiveSession walks one session through openai-go: the phone gets
// session.started, a user turn becomes transcript and a delegation, the
// acknowledgement is spoken, the backend's commentary is acknowledged with
// its placement and spoken, usage accrues, and session.close ends it with
// the final usage.
func TestLiveSession(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{Said: []string{"What can I cook with eggs"}})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, func(offer string) live.LiveNewParams { return liveParams(offer, 0) })
	if !strings.HasPrefix(c.id, "live_") {
		t.Errorf("session id %q, want live_…", c.id)
	}
	started := nextPhone(t, ctx, c.phone)
	if started.Type != "session.started" {
		t.Fatalf("phone's first event %s, want session.started", started.Type)
	}
	res := started.AsSessionStartedEvent().Session
	if res.ID != c.id || res.Model != liveModel || res.Store || res.Delegation.Type != "client" ||
		res.Audio.Output.Voice.AsString() != "marin" {
		t.Errorf("session.started session = %s", res.RawJSON())
	}

	if err := c.phone.SendAudio(ctx, 5, 0); err != nil {
		t.Fatal(err)
	}
	created, seen := until(t, ctx, c.sb, "session.delegation.created")
	heard := ""
	var lastEnd int64
	for _, e := range seen {
		if e.Type == "session.input_transcript.delta" {
			d := e.AsInputTranscriptDeltaEvent()
			heard += d.Delta
			if d.StartMs < lastEnd || d.EndMs < d.StartMs {
				t.Errorf("transcript delta %q spans [%d, %d] after %d", d.Delta, d.StartMs, d.EndMs, lastEnd)
			}
			lastEnd = d.EndMs
		}
	}
	if heard != "What can I cook with eggs" {
		t.Errorf("heard %q before the delegation", heard)
	}
	del := created.AsDelegationCreatedEvent()
	if del.Delegation.Target != "client" || !strings.HasPrefix(del.Delegation.ID, "item_") || del.OffsetMs != lastEnd {
		t.Errorf("delegation %s, want target client at the transcript's end %d", del.RawJSON(), lastEnd)
	}
	// acknowledgement_delay_ms 0: the voice says "one moment" at once.
	ack := spoken(t, ctx, c.sb, "One moment.")
	if ack.StartMs < del.OffsetMs {
		t.Errorf("acknowledgement at %d, before the delegation at %d", ack.StartMs, del.OffsetMs)
	}

	if err := c.sb.Send(ctx, commentary(del.Delegation.ID, "Try a Spanish omelette.", "e1")); err != nil {
		t.Fatal(err)
	}
	appended, _ := until(t, ctx, c.sb, "session.commentary.appended")
	a := appended.AsCommentaryAppendedEvent()
	if a.ClientEventID != "e1" || a.StartMs < del.OffsetMs || a.EndMs != a.StartMs {
		t.Errorf("commentary.appended %s", a.RawJSON())
	}
	said := spoken(t, ctx, c.sb, "Try a Spanish omelette.")
	if said.StartMs < ack.EndMs {
		t.Errorf("commentary spoken from %d, over the acknowledgement ending %d", said.StartMs, ack.EndMs)
	}

	usage, _ := until(t, ctx, c.sb, "session.usage.updated")
	u := usage.AsSessionUsageUpdatedEvent()
	if u.Usage.Seconds <= 0 || u.ContextWindow.UsageRatio <= 0 || u.ContextWindow.UsageRatio > 1 {
		t.Errorf("usage.updated %s", u.RawJSON())
	}

	if err := c.sb.Send(ctx, live.ConnectClientEventUnionParam{OfSessionClose: &live.SessionCloseEventParam{}}); err != nil {
		t.Fatal(err)
	}
	closed, _ := until(t, ctx, c.sb, "session.closed")
	ce := closed.AsSessionClosedEvent()
	if ce.Reason != "close_requested" || ce.Usage.Seconds < u.Usage.Seconds || ce.Session.ID != c.id {
		t.Errorf("session.closed %s", ce.RawJSON())
	}
	testkit.Eventually(t, ctx, "the session to be listed closed", func() bool {
		st, _ := s.LiveSession(c.id)
		return st.Status == "closed"
	})
	st, _ := s.LiveSession(c.id)
	if st.CloseReason != "close_requested" || st.UsageSeconds != ce.Usage.Seconds || st.BilledSeconds != max(15, ce.Usage.Seconds) {
		t.Errorf("stats: reason %q usage %v billed %v; closed said %v", st.CloseReason, st.UsageSeconds, st.BilledSeconds, ce.Usage.Seconds)
	}
	if len(st.Applied) != 2 || st.Applied[0].Type != "session.commentary.append" || st.Applied[0].Path != sim.PathSideband ||
		*st.Applied[0].DelegationID != del.Delegation.ID || st.Applied[1].Type != "session.close" {
		t.Errorf("applied %+v", st.Applied)
	}
	if len(st.Delegations) != 1 || st.Acknowledgements != 1 {
		t.Errorf("delegations %v, acknowledgements %d", st.Delegations, st.Acknowledgements)
	}
}

// spoken reads output transcript deltas until they spell text, and returns
// its span as one delta.
func spoken(t *testing.T, ctx context.Context, sb *live.SidebandConnection, text string) live.OutputTranscriptDeltaEvent {
	t.Helper()
	var got string
	var span live.OutputTranscriptDeltaEvent
	for got != text {
		e, seen := until(t, ctx, sb, "session.output_transcript.delta")
		_ = seen
		d := e.AsOutputTranscriptDeltaEvent()
		if got == "" {
			span = d
		}
		got += d.Delta
		span.EndMs = d.EndMs
		if !strings.HasPrefix(text, got) {
			t.Fatalf("spoken %q, want %q", got, text)
		}
	}
	return span
}
