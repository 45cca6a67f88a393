package billing_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/live"

	"github.com/voxgate/voxgate/billing"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// realtimeTurn opens a Realtime WebSocket session on the simulator with
// input transcription, speaks one second to it and returns the session's
// usage and its transcription's, as the gateway's sideband observes them.
func realtimeTurn(t *testing.T, ctx context.Context, base string) (billing.Usage, billing.Usage) {
	t.Helper()
	ws, _, err := simtest.DialSocket(ctx, base, simtest.TestKey, "model=gpt-realtime")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"audio": map[string]any{"input": map[string]any{"transcription": map[string]any{"model": "gpt-4o-mini-transcribe"}}}}}); err != nil {
		t.Fatal(err)
	}
	if err := ws.Send(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(make([]byte, 48000))}); err != nil {
		t.Fatal(err)
	}
	type sides struct {
		Text  int64 `json:"text_tokens"`
		Audio int64 `json:"audio_tokens"`
	}
	var done struct {
		Response struct {
			Usage struct {
				In struct {
					sides
					Cached sides `json:"cached_tokens_details"`
				} `json:"input_token_details"`
				Out sides `json:"output_token_details"`
			}
		}
	}
	var heard struct {
		Usage struct {
			In  sides `json:"input_token_details"`
			Out int64 `json:"output_tokens"`
		}
	}
	for got := 0; got < 2; {
		e, err := ws.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "response.done":
			err, got = json.Unmarshal(e.Raw, &done), got+1
		case "conversation.item.input_audio_transcription.completed":
			err, got = json.Unmarshal(e.Raw, &heard), got+1
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	u := done.Response.Usage
	return billing.Usage{TextIn: u.In.Text, TextCachedIn: u.In.Cached.Text, AudioIn: u.In.Audio, AudioCachedIn: u.In.Cached.Audio,
			TextOut: u.Out.Text, AudioOut: u.Out.Audio},
		billing.Usage{TextIn: heard.Usage.In.Text, AudioIn: heard.Usage.In.Audio, TextOut: heard.Usage.Out}
}

// Voice against the simulator's organization usage and costs: a Realtime
// session's model and its transcription model each reconcile under their
// own model, a GPT-Live session's seconds under its model by cost and its
// backend's tokens under the backend's model; a deleted record turns its
// day red by exactly its lines.
func TestReconcileVoiceAgainstTheSimulator(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var now atomic.Int64
	nov := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	s, base := testkit.NewSim(t, sim.Config{Now: func() time.Time { return time.Unix(0, now.Load()).UTC() },
		Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 10},
		Live:     sim.Live{ConnectTimeout: 200 * time.Millisecond}})
	write := func(r billing.Record, at time.Time, mode string) int64 {
		t.Helper()
		rec, err := fx.ledger.Write(ctx, fx.pool, r)
		if err != nil || rec.CostMicros == nil {
			t.Fatalf("write: %v, %+v", err, rec)
		}
		if _, err := fx.pool.Exec(ctx, `UPDATE usage_records SET created_at = $1, mode = $2 WHERE id = $3`, at, mode, rec.ID); err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	var realtimeIDs []int64
	for d := range 4 {
		at := nov.AddDate(0, 0, d).Add(9 * time.Hour)
		now.Store(at.UnixNano())
		u, tr := realtimeTurn(t, ctx, base)
		realtimeIDs = append(realtimeIDs, write(billing.Record{UserID: "alice", SessionID: "vs_rt" + at.Format("0102"),
			Kind: billing.KindVoice, Provider: "openai", Model: "gpt-realtime", Usage: u,
			TranscriptionModel: "gpt-4o-mini-transcribe", Transcription: tr, DurationMS: 3000,
			UsageSource: billing.SourceServerObserved}, at, "sideband"))
	}
	// A GPT-Live session that never connects is billed its 15 s start
	// charge when the simulator gives up on it.
	liveAt := nov.AddDate(0, 0, 2).Add(15 * time.Hour)
	now.Store(liveAt.UnixNano())
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := simtest.Client(base)
	created, err := client.Live.New(ctx, live.LiveNewParams{Session: live.MediaSessionConfigParam{Model: "gpt-live-1"},
		Transport: live.LiveNewParamsTransport{Sdp: offer}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, ctx, "the unconnected Live session to close", func() bool {
		st, _ := s.LiveSession(created.Session.ID)
		return st.Status == "closed"
	})
	// Its delegations' backend: one completion on the simulator, which
	// the record holds as its backend line.
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-6-luna",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("a recipe with leeks")}})
	if err != nil {
		t.Fatal(err)
	}
	liveID := write(billing.Record{UserID: "alice", SessionID: "vs_live", Kind: billing.KindVoice, Provider: "openai",
		Model: "gpt-live-1", Usage: billing.Usage{AudioMillis: 15_000}, DurationMS: 15_000,
		BackendModel: "gpt-6-luna", Backend: completionUsage(t, resp),
		UsageSource: billing.SourceServerObserved}, liveAt, "live")

	h := fx.ledger.HandleReconcile(billing.NewOpenAIUsage(base+"/v1", simtest.TestKey))
	reconcile := func() map[string]map[string]billing.ReconcileRow {
		t.Helper()
		rec := get(t, h, "/v1/admin/costs/reconcile?from=2026-11-01&to=2026-11-05&threshold_micros=1")
		var out billing.Reconciliation
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		days := map[string]map[string]billing.ReconcileRow{}
		for _, d := range out.Days {
			days[d.Date] = map[string]billing.ReconcileRow{}
			for _, m := range d.Models {
				days[d.Date][m.Model] = m
			}
		}
		return days
	}
	clean := reconcile()
	for _, d := range []string{"2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"} {
		for _, model := range []string{"gpt-realtime", "gpt-4o-mini-transcribe"} {
			m := clean[d][model]
			if m.Red || m.ProviderTokens == 0 || m.Coverage != "1.0000" || m.ProviderCostMicros == 0 {
				t.Errorf("%s %s: %+v, want green, tokens and cost reported", d, model, m)
			}
		}
	}
	if m := clean["2026-11-03"]["gpt-live-1"]; m.Red || m.ProviderCostMicros != 12_500 || m.LedgerCostMicros != 12_500 || m.ProviderTokens != 0 {
		t.Errorf("live: %+v, want green at 12,500 micro-USD (15 s at $0.05/min)", m)
	}
	if m := clean["2026-11-03"]["gpt-6-luna"]; m.Red || m.ProviderTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens || m.CostDiffMicros != 0 || m.ProviderCostMicros == 0 {
		t.Errorf("live backend: %+v, want green with the completion's tokens and cost", m)
	}

	if _, err := fx.pool.Exec(ctx, `DELETE FROM usage_records WHERE id = ANY($1)`, []int64{realtimeIDs[1], liveID}); err != nil {
		t.Fatal(err)
	}
	red := reconcile()
	for d, models := range red {
		for model, m := range models {
			was := clean[d][model]
			gone := (d == "2026-11-02" && model != "gpt-live-1") || (d == "2026-11-03" && (model == "gpt-live-1" || model == "gpt-6-luna"))
			if !gone {
				if m != was {
					t.Errorf("%s %s changed: %+v, was %+v", d, model, m, was)
				}
				continue
			}
			if !m.Red || m.LedgerTokens != 0 || m.LedgerCostMicros != 0 || m.TokenDiff != -m.ProviderTokens ||
				m.CostDiffMicros != -m.ProviderCostMicros || m.ProviderCostMicros != was.ProviderCostMicros {
				t.Errorf("%s %s after the delete: %+v, want red by all the provider's figures (was %+v)", d, model, m, was)
			}
		}
	}
}
