package controlplane_test

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/controlplane"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
	"github.com/voxgate/voxgate/tools"
)

// rtUsage is a response.done usage as the provider sends it.
type rtUsage struct {
	InputTokens       int64 `json:"input_tokens"`
	OutputTokens      int64 `json:"output_tokens"`
	InputTokenDetails struct {
		TextTokens          int64 `json:"text_tokens"`
		AudioTokens         int64 `json:"audio_tokens"`
		ImageTokens         int64 `json:"image_tokens"`
		CachedTokens        int64 `json:"cached_tokens"`
		CachedTokensDetails struct {
			TextTokens  int64 `json:"text_tokens"`
			AudioTokens int64 `json:"audio_tokens"`
			ImageTokens int64 `json:"image_tokens"`
		} `json:"cached_tokens_details"`
	} `json:"input_token_details"`
	OutputTokenDetails struct {
		TextTokens  int64 `json:"text_tokens"`
		AudioTokens int64 `json:"audio_tokens"`
	} `json:"output_token_details"`
}

func (u *rtUsage) add(v rtUsage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	d, e := &u.InputTokenDetails, v.InputTokenDetails
	d.TextTokens += e.TextTokens
	d.AudioTokens += e.AudioTokens
	d.ImageTokens += e.ImageTokens
	d.CachedTokens += e.CachedTokens
	d.CachedTokensDetails.TextTokens += e.CachedTokensDetails.TextTokens
	d.CachedTokensDetails.AudioTokens += e.CachedTokensDetails.AudioTokens
	d.CachedTokensDetails.ImageTokens += e.CachedTokensDetails.ImageTokens
	u.OutputTokenDetails.TextTokens += v.OutputTokenDetails.TextTokens
	u.OutputTokenDetails.AudioTokens += v.OutputTokenDetails.AudioTokens
}

// phoneScript makes the simulated model call echo when it hears pasta, and
// speak once the result is back.
func phoneScript() sim.Script {
	no, yes := false, true
	return sim.Script{Rules: []sim.Rule{
		{Name: "call", When: sim.When{Contains: []string{"pasta"}, ToolResults: &no},
			Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "echo", Arguments: map[string]any{"q": "pasta"}}}}},
		{Name: "speak", When: sim.When{ToolResults: &yes}, Reply: sim.Reply{Text: "I found a pasta recipe for you."}},
	}}
}

// A pion peer plays the phone: it starts a session, places the WebRTC
// call with the client secret, sends audio, forwards the model's function
// call to the gateway, returns the output, sums every response.done usage
// and the transcription's, and ends with them. The cost record equals the
// price table applied by hand to the simulator's deterministic counts.
func TestPhoneCallEndToEnd(t *testing.T) {
	t.Parallel()
	var runs int64
	f := newFixture(t, options{runs: &runs, configFn: handPricedModels, simCfg: sim.Config{Script: phoneScript(),
		Realtime: sim.Realtime{ReplyAudioMS: 200, GenerationMS: 50}}})
	p := newUser(t, "pro")
	start := mustStart(t, f, p, `{}`)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	phone := simtest.NewCaller(t)
	if _, err := phone.Dial(ctx, strings.TrimSuffix(start.RealtimeURL, "/v1/realtime/calls"), start.ClientSecret.Value); err != nil {
		t.Fatal(err)
	}
	// A second and a half of audio: the simulator's turn is 50 packets, and
	// the first few may go out before the media path is up.
	if err := phone.SendAudio(ctx, 75, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var total, transcription rtUsage
	responses, toolCalls := 0, 0
	for responses < 2 {
		ev, err := phone.Next(ctx)
		if err != nil {
			t.Fatalf("after %d responses: %v", responses, err)
		}
		switch ev.Type {
		case "response.function_call_arguments.done":
			var fc struct {
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			}
			if err := json.Unmarshal(ev.Raw, &fc); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(fc)
			w := call(t, f.svc.HandleToolCall, p, "POST", "/", body, start.SessionID)
			if w.Code != 200 {
				t.Fatalf("tool call: %d %s", w.Code, w.Body)
			}
			res := decode[tools.Result](t, w)
			toolCalls++
			if err := phone.Send(map[string]any{"type": "conversation.item.create",
				"item": map[string]any{"type": "function_call_output", "call_id": fc.CallID, "output": res.Output}}); err != nil {
				t.Fatal(err)
			}
			if err := phone.Send(map[string]any{"type": "response.create"}); err != nil {
				t.Fatal(err)
			}
		default:
			if usageEvent(t, ev, &total, &transcription) {
				responses++
			}
		}
	}
	if toolCalls != 1 || runs != 1 {
		t.Fatalf("%d tool calls forwarded, tool ran %d times; want 1, 1", toolCalls, runs)
	}
	if total.OutputTokenDetails.AudioTokens == 0 || total.InputTokenDetails.CachedTokensDetails.TextTokens == 0 {
		t.Fatalf("usage %+v: want spoken audio and cached input from the second response", total)
	}

	usage := map[string]any{}
	raw, _ := json.Marshal(total)
	_ = json.Unmarshal(raw, &usage)
	usage["transcription"] = map[string]any{"type": "tokens", "input_tokens": transcription.InputTokens,
		"output_tokens": transcription.OutputTokens, "input_token_details": map[string]any{
			"text_tokens": transcription.InputTokenDetails.TextTokens, "audio_tokens": transcription.InputTokenDetails.AudioTokens}}
	body, _ := json.Marshal(map[string]any{"reason": "user_hangup", "usage": usage})
	w := call(t, f.svc.HandleEnd, p, "POST", "/", body, start.SessionID)
	if w.Code != 200 {
		t.Fatalf("end: %d %s", w.Code, w.Body)
	}
	ended := decode[controlplane.Session](t, w)
	if ended.Cost == nil || ended.Cost.CostMicros == nil {
		t.Fatalf("no cost record: %+v", ended)
	}
	want := handPrice(total, transcription)
	if got := *ended.Cost.CostMicros; got != want {
		t.Fatalf("cost %d micros, hand-priced %d (usage %+v, transcription %+v)", got, want, total, transcription)
	}
	t.Logf("session %s: %d micros for %+v", start.SessionID, want, total)
}

// handPricedModels are the models handPrice prices: the retiring
// gpt-realtime and its token-billed transcription model, still callable
// (and, in tests, never past their dates).
func handPricedModels(c *config.Voice) {
	c.Model, c.TranscriptionModel = "gpt-realtime", "gpt-4o-mini-transcribe"
}

// handPrice is prices.yaml's gpt-realtime and gpt-4o-mini-transcribe rows
// applied by hand: Σ tokens × $/1M, cached input at its own price, one
// half-up rounding.
func handPrice(u, tr rtUsage) int64 {
	d := u.InputTokenDetails
	terms := [][2]int64{
		{d.TextTokens - d.CachedTokensDetails.TextTokens, 4_000_000}, {d.CachedTokensDetails.TextTokens, 400_000},
		{d.AudioTokens - d.CachedTokensDetails.AudioTokens, 32_000_000}, {d.CachedTokensDetails.AudioTokens, 400_000},
		{d.ImageTokens - d.CachedTokensDetails.ImageTokens, 5_000_000}, {d.CachedTokensDetails.ImageTokens, 500_000},
		{u.OutputTokenDetails.TextTokens, 16_000_000}, {u.OutputTokenDetails.AudioTokens, 64_000_000},
		{tr.InputTokenDetails.TextTokens, 1_250_000}, {tr.InputTokenDetails.AudioTokens, 3_000_000}, {tr.OutputTokens, 5_000_000},
	}
	sum := new(big.Int)
	for _, tm := range terms {
		sum.Add(sum, new(big.Int).Mul(big.NewInt(tm[0]), big.NewInt(tm[1])))
	}
	sum.Add(sum, big.NewInt(500_000))
	return sum.Quo(sum, big.NewInt(1_000_000)).Int64()
}
