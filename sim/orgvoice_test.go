package sim_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/live"
	"github.com/openai/openai-go/v3/option"

	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// orgDay reads one model's completions usage and cost line for the UTC
// day of now, through openai-go's admin client.
func orgDay(t *testing.T, ctx context.Context, base, model string) (openai.AdminOrganizationUsageCompletionsResponseDataResultUnion, int64, bool) {
	t.Helper()
	client := openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAdminAPIKey(simtest.TestKey), option.WithMaxRetries(0))
	day := time.Now().UTC().Truncate(24 * time.Hour)
	usage, err := client.Admin.Organization.Usage.Completions(ctx, openai.AdminOrganizationUsageCompletionsParams{
		StartTime: day.Unix(), EndTime: openai.Int(day.Add(24 * time.Hour).Unix()), GroupBy: []string{"model"}})
	if err != nil {
		t.Fatal(err)
	}
	var row openai.AdminOrganizationUsageCompletionsResponseDataResultUnion
	found := false
	for _, b := range usage.Data {
		for _, r := range b.Results {
			if r.Model == model {
				row, found = r, true
			}
		}
	}
	costs, err := client.Admin.Organization.Usage.Costs(ctx, openai.AdminOrganizationUsageCostsParams{
		StartTime: day.Unix(), EndTime: openai.Int(day.Add(24 * time.Hour).Unix()), GroupBy: []string{"line_item"}})
	if err != nil {
		t.Fatal(err)
	}
	var micros int64
	for _, b := range costs.Data {
		for _, r := range b.Results {
			if r.LineItem == model {
				micros += int64(math.Round(r.Amount.Value * 1e6))
			}
		}
	}
	return row, micros, found
}

type tokenSides struct {
	TextTokens  int64 `json:"text_tokens"`
	AudioTokens int64 `json:"audio_tokens"`
}

// A Realtime session's responses and its input transcriptions are in the
// organization's completions usage under their own models, audio tokens
// apart, and in its costs, each priced as its own request.
func TestOrgUsageCountsRealtime(t *testing.T) {
	t.Parallel()
	_, base := newRealtimeSim(t, sim.Realtime{})
	ctx := testCtx(t)
	ws := dialModelSocket(t, base)
	expect(t, ctx, ws, "session.created")
	if err := ws.Send(map[string]any{"type": "session.update", "session": map[string]any{"type": "realtime",
		"audio": map[string]any{"input": map[string]any{"transcription": map[string]any{"model": "gpt-4o-mini-transcribe"}}}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, ctx, ws, "session.updated")
	if err := ws.Send(map[string]any{"type": "input_audio_buffer.append", "audio": base64.StdEncoding.EncodeToString(make([]byte, 48000))}); err != nil {
		t.Fatal(err)
	}
	// The transcription may come before or after the response ends.
	var done, heard simtest.Event
	for done.Raw == nil || heard.Raw == nil {
		e, err := ws.Next(ctx)
		if err != nil {
			t.Fatalf("response.done %v, transcription %v: %v", done.Raw != nil, heard.Raw != nil, err)
		}
		switch e.Type {
		case "response.done":
			done = e
		case "conversation.item.input_audio_transcription.completed":
			heard = e
		}
	}
	var d struct {
		Response struct {
			Usage struct {
				InputTokens       int64 `json:"input_tokens"`
				OutputTokens      int64 `json:"output_tokens"`
				InputTokenDetails struct {
					tokenSides
					CachedTokensDetails tokenSides `json:"cached_tokens_details"`
				} `json:"input_token_details"`
				OutputTokenDetails tokenSides `json:"output_token_details"`
			}
		}
	}
	var tr struct {
		Usage struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
		}
	}
	if err := json.Unmarshal(done.Raw, &d); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(heard.Raw, &tr); err != nil {
		t.Fatal(err)
	}
	u := d.Response.Usage
	if u.InputTokenDetails.AudioTokens == 0 || u.OutputTokenDetails.AudioTokens == 0 || tr.Usage.InputTokens == 0 {
		t.Fatalf("no audio in the usage: %s / %s", done.Raw, heard.Raw)
	}
	// The oracle is a hand computation at gpt-realtime's published rates,
	// in hundredths of a micro-USD (n tokens at $d per 1M are n·d
	// micro-USD): text $4.00 in, $0.40 cached, $16.00 out; audio $32.00
	// in, $0.40 cached, $64.00 out (docs/sim.md, "Prices").
	in, cached := u.InputTokenDetails, u.InputTokenDetails.CachedTokensDetails
	hundredths := (in.TextTokens-cached.TextTokens)*400 + cached.TextTokens*40 + u.OutputTokenDetails.TextTokens*1600 +
		(in.AudioTokens-cached.AudioTokens)*3200 + cached.AudioTokens*40 + u.OutputTokenDetails.AudioTokens*6400
	want := (hundredths + 50) / 100
	row, micros, ok := orgDay(t, ctx, base, "gpt-realtime")
	// gpt-4o-mini-transcribe: audio tokens in at $3.00, text out at $5.00.
	want = (tr.Usage.InputTokens*300 + tr.Usage.OutputTokens*500 + 50) / 100
	row, micros, ok = orgDay(t, ctx, base, "gpt-4o-mini-transcribe")
	if !ok || row.InputTokens != tr.Usage.InputTokens || row.OutputTokens != tr.Usage.OutputTokens || row.InputAudioTokens != tr.Usage.InputTokens || micros != want || want == 0 {
		t.Errorf("gpt-4o-mini-transcribe: %s, %d micro-USD; want %+v, %d micro-USD", row.RawJSON(), micros, tr.Usage, want)
	}
}

// A GPT-Live session is billed its seconds when it closes, the start
// charge included: a line in the costs, no tokens in the completions usage.
func TestOrgCostsCountLiveSeconds(t *testing.T) {
	t.Parallel()
	s, base := newLiveSim(t, sim.Live{})
	ctx := testCtx(t)
	c := dialLive(t, ctx, s, base, func(offer string) live.LiveNewParams { return liveParams(offer, 0) })
	if err := c.sb.Send(ctx, live.ConnectClientEventUnionParam{OfSessionClose: &live.SessionCloseEventParam{}}); err != nil {
		t.Fatal(err)
	}
	until(t, ctx, c.sb, "session.closed")
	testkit.Eventually(t, ctx, "the session to be listed closed", func() bool {
		st, _ := s.LiveSession(c.id)
		return st.Status == "closed"
	})
	st, _ := s.LiveSession(c.id)
	// $0.05 a minute is 5/6 of a micro-USD a millisecond, rounded half
	// up: 15 s is 12,500.
	ms := int64(math.Round(st.BilledSeconds * 1000))
	want := (ms*10 + 6) / 12
	row, micros, listed := orgDay(t, ctx, base, st.Model)
	if listed || micros != want || want < 12_500 {
		t.Errorf("%s: listed in usage %v (%s), %d micro-USD; want unlisted, %d micro-USD for %v s", st.Model, listed, row.RawJSON(), micros, want, st.BilledSeconds)
	}
}
