package main

import (
	"testing"

	"github.com/voxgate/voxgate/sim"
)

// TestChatRouteCutAfterUsage: through POST /v1/chat, the primary's usage
// chunk arrives and then its connection is cut before [DONE]. The turn
// ends with AI_UNAVAILABLE (never the fallback: the answer had begun),
// and its record carries the usage the provider reported, as billed,
// not an estimate: the same counts as a clean turn of the same message.
func TestChatRouteCutAfterUsage(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{true, false} {
		name := map[bool]string{true: "streamed", false: "json"}[stream]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g := startGateway(t, nil, nil)
			body := `{"message":"hello","stream":` + map[bool]string{true: "true", false: "false"}[stream] + `}`
			if r := g.chat(t, "u1", body); r.Status != 200 || r.response()["message"] == "" {
				t.Fatalf("the clean turn: %d %s", r.Status, r.Raw)
			}
			g.primary.fault(t, sim.Fault{Kind: sim.FaultCutStream, Fraction: 1, AfterChunks: 1000})
			r := g.chat(t, "u1", body)
			if stream {
				if last := r.last(); r.Status != 200 || last.Type != "error" || last.Data["code"] != "AI_UNAVAILABLE" {
					t.Fatalf("cut turn: %d, last event %s %v, want error AI_UNAVAILABLE", r.Status, last.Type, last.Data)
				}
			} else if r.Status != 503 || errorCode(r.Raw) != "AI_UNAVAILABLE" {
				t.Fatalf("cut turn: %d %s, want 503 AI_UNAVAILABLE", r.Status, r.Raw)
			}
			if n := g.fallback.count(); n != 0 {
				t.Errorf("the fallback saw %d calls after the answer began", n)
			}
			recs := g.records(t, "u1")
			if len(recs) != 2 {
				t.Fatalf("records %+v, want the two turns'", recs)
			}
			clean, cut := recs[0], recs[1]
			if clean.UsageSource != "provider_reported" || clean.TextOut == 0 {
				t.Fatalf("the clean turn's record %+v", clean)
			}
			if cut.Kind != "chat" || cut.Provider != "primary" || cut.UsageSource != "provider_reported" ||
				cut.TextIn != clean.TextIn || cut.TextOut != clean.TextOut {
				t.Errorf("the cut turn's record %+v, want the provider's reported %d in, %d out", cut, clean.TextIn, clean.TextOut)
			}
		})
	}
}
