package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/examples/yummyyummix/hooks"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

const yummySecret = "yummy-hook-secret-0123456789"

// yummyAnswer is what the scripted model says once the search answered.
const yummyAnswer = "Lemon pasta with peas takes twenty minutes."

// yummySim is one simulator for text, sideband voice and live: a user who
// asks for pasta (typed, spoken to the Realtime model, or said to the Live
// voice and delegated) gets search_recipes, then the answer.
func yummySim() sim.Config {
	return sim.Config{Latency: simtest.ZeroLatency(),
		Script: sim.Script{Rules: []sim.Rule{
			{Name: "search", When: sim.When{Contains: []string{"pasta"}, ToolResults: boolp(false)},
				Reply: sim.Reply{ToolCalls: []sim.ScriptCall{{Name: "search_recipes", Arguments: map[string]any{"query": "pasta"}}}}},
			{Name: "answer", When: sim.When{ToolResults: boolp(true)}, Reply: sim.Reply{Text: yummyAnswer}},
		}},
		Realtime: sim.Realtime{Heard: "Find me a pasta recipe", ReplyAudioMS: 200, GenerationMS: 50},
		Live: sim.Live{Said: []string{"Find me a pasta recipe"}, TurnPackets: 25, ClockRate: 20,
			UsageInterval: time.Second, ConnectTimeout: time.Hour},
	}
}

// searchesBy are the tool server's search_recipes calls for user.
func searchesBy(s *hooks.Server, user string) []hooks.Call {
	var out []hooks.Call
	for _, c := range s.Log() {
		if c.Name == "search_recipes" && c.UserID == user {
			out = append(out, c)
		}
	}
	return out
}

// The YummyYummix example end to end: its configuration, its own tool
// server, the simulator and PostgreSQL. A pion phone runs a recipe search
// by voice in sideband and in live mode; the seed's action endpoint starts
// a session and runs a tool; a text turn streams the SSE contract.
func TestYummyyummixExample(t *testing.T) {
	t.Parallel()
	tools := hooks.New([]byte(yummySecret))
	hs := newHookServer(t, tools)
	ex := loadExample(t, "yummyyummix", "http://127.0.0.1:8094", hs.URL)
	s, ss := simtest.NewServer(t, yummySim())
	m := startExample(t, ex, ss.URL, map[string]string{"VOXGATE_DATABASE_URL": pgtest.URL(t), "YUMMY_HOOK_SECRET": yummySecret},
		func(c *config.Config) { c.Voice.Mode, c.Voice.Instructions = ex.Voice.Mode, ex.Voice.Instructions })
	if ex.Voice.Mode != "sideband" || ex.Quota.Plans["free"].VoiceSecondsPerMonth != 1800 {
		t.Fatalf("voice %q, month %d s: want sideband and the seed's 30 minutes", ex.Voice.Mode, ex.Quota.Plans["free"].VoiceSecondsPerMonth)
	}
	base := m.URL()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// offer starts a session of mode ("" for the configured one) for tok
	// and places its call with a pion phone through the gateway.
	offer := func(tok, mode string) (string, *simtest.Caller) {
		t.Helper()
		status, _, body := call(t, "POST", base+"/v1/voice/sessions", tok, strings.NewReader(`{"mode":"`+mode+`"}`))
		var start struct {
			SessionID string `json:"session_id"`
			SDPURL    string `json:"sdp_url"`
		}
		if err := json.Unmarshal([]byte(body), &start); status != 201 || err != nil || start.SDPURL != "/v1/voice/sessions/"+start.SessionID+"/sdp" {
			t.Fatalf("start %q: %d %s", mode, status, body)
		}
		phone := simtest.NewCaller(t)
		sdp, err := phone.Offer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, "POST", base+start.SDPURL, strings.NewReader(sdp))
		req.Header.Set("Content-Type", "application/sdp")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("offer: %d %s", resp.StatusCode, answer)
		}
		if err := phone.Accept(string(answer)); err != nil {
			t.Fatal(err)
		}
		if err := phone.WaitOpen(ctx); err != nil {
			t.Fatal(err)
		}
		return start.SessionID, phone
	}
	end := func(tok, id string) string {
		t.Helper()
		status, _, body := call(t, "POST", base+"/v1/voice/sessions/"+id+"/end", tok, strings.NewReader(`{}`))
		if status != 200 || !strings.Contains(body, `"usage_source":"server_observed"`) {
			t.Fatalf("end: %d %s", status, body)
		}
		return body
	}

	t.Run("sideband", func(t *testing.T) {
		tok := mint(t, "yy-sideband", "", "")
		id, phone := offer(tok, "")
		calls := s.Calls()
		callID := calls[len(calls)-1].ID
		testkit.Eventually(t, ctx, "the gateway's sideband on the call", func() bool { st, _ := s.Call(callID); return st.Sidebands >= 1 })
		if err := phone.SendAudio(ctx, 75, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		// The model's call ran on the gateway, through the app's tool
		// server, and its output went back over the sideband.
		var st sim.CallStats
		testkit.Eventually(t, ctx, "the search answered over the sideband", func() bool {
			st, _ = s.Call(callID)
			return st.ToolOutputs["sideband"] >= 1
		})
		got := searchesBy(tools, "yy-sideband")
		if len(got) != 1 || got[0].SessionID != id || string(got[0].Arguments) != `{"query":"pasta"}` ||
			st.ToolCalls != 1 || st.ToolOutputs["sideband"] != 1 || st.ToolOutputs["datachannel"] != 0 {
			t.Fatalf("tool server saw %+v; sim call %+v", got, st)
		}
		end(tok, id)
	})

	t.Run("live", func(t *testing.T) {
		tok := mint(t, "yy-live", "", "")
		id, phone := offer(tok, "live")
		sessions := s.LiveSessions()
		liveID := sessions[len(sessions)-1].ID
		testkit.Eventually(t, ctx, "the gateway's sideband on the live session", func() bool {
			st, _ := s.LiveSession(liveID)
			return st.Sidebands >= 1
		})
		if err := phone.SendAudio(ctx, 30, 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		// The voice delegated the request; the gateway's agent loop ran the
		// search through the app's tool server and answered as commentary.
		var st sim.LiveStats
		testkit.Eventually(t, ctx, "the delegation answered", func() bool {
			st, _ = s.LiveSession(liveID)
			return slices.ContainsFunc(st.Applied, func(a sim.LiveApplied) bool { return a.Type == "session.commentary.append" })
		})
		got := searchesBy(tools, "yy-live")
		if len(st.Delegations) != 1 || len(got) != 1 || got[0].SessionID != id || string(got[0].Arguments) != `{"query":"pasta"}` ||
			!strings.HasPrefix(got[0].CallID, st.Delegations[0]+".") {
			t.Fatalf("delegations %v; tool server saw %+v", st.Delegations, got)
		}
		for _, a := range st.Applied {
			if a.Type == "session.commentary.append" && (a.Path != "sideband" || a.Content != yummyAnswer) {
				t.Fatalf("commentary %+v", a)
			}
		}
		if body := end(tok, id); !strings.Contains(body, `"model":"gpt-live-1.1"`) {
			t.Fatalf("live record: %s", body)
		}
	})

	t.Run("action endpoint", func(t *testing.T) {
		tok := mint(t, "yy-action", "", "")
		// The seed's start_session, in direct mode: the app keeps its own
		// WebRTC call and forwards the model's calls.
		status, _, body := call(t, "POST", base+"/v1/voice", tok, strings.NewReader(`{"action":"start_session","mode":"direct"}`))
		var start struct {
			SessionID    string `json:"session_id"`
			ClientSecret struct {
				Value string `json:"value"`
			} `json:"client_secret"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Quota struct {
				SecondsLimit int `json:"seconds_limit"`
			} `json:"quota"`
		}
		if err := json.Unmarshal([]byte(body), &start); status != 201 || err != nil || start.ClientSecret.Value == "" ||
			len(start.Tools) != 4 || start.Quota.SecondsLimit != 1800 {
			t.Fatalf("start_session: %d %s", status, body)
		}
		status, _, body = call(t, "POST", base+"/v1/voice", tok, strings.NewReader(
			`{"action":"execute_tool","toolName":"search_recipes","toolArgs":{"query":"pasta","max_time_minutes":20},"callId":"call_1"}`))
		var res struct {
			Output string `json:"output"`
			Result struct {
				Recipes []struct {
					Title string `json:"title"`
				} `json:"recipes"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &res); status != 200 || err != nil || len(res.Result.Recipes) != 2 ||
			res.Result.Recipes[0].Title != "Lemon Pasta with Peas" || !strings.Contains(res.Output, "Pesto Pasta Salad") {
			t.Fatalf("execute_tool: %d %s", status, body)
		}
		if got := searchesBy(tools, "yy-action"); len(got) != 1 || got[0].SessionID != start.SessionID || got[0].CallID != "call_1" {
			t.Fatalf("tool server saw %+v", got)
		}
		// Without a mode the start is the configured sideband: voxgate runs
		// that session's tools itself, so an app's execute_tool is refused.
		sb := mint(t, "yy-action-sb", "", "")
		if status, _, body := call(t, "POST", base+"/v1/voice", sb, strings.NewReader(`{"action":"start_session"}`)); status != 201 || !strings.Contains(body, `"mode":"sideband"`) {
			t.Fatalf("start_session without a mode: %d %s", status, body)
		}
		status, _, body = call(t, "POST", base+"/v1/voice", sb, strings.NewReader(`{"action":"execute_tool","toolName":"search_recipes","toolArgs":{"query":"pasta"}}`))
		if status != 409 || errorCode(body) != "CONFLICT" || len(searchesBy(tools, "yy-action-sb")) != 0 {
			t.Fatalf("execute_tool in a sideband session: %d %s", status, body)
		}
		// Another user's session is not found, and runs nothing.
		status, _, body = call(t, "POST", base+"/v1/voice", mint(t, "yy-other", "", ""), strings.NewReader(
			`{"action":"execute_tool","toolName":"search_recipes","toolArgs":{"query":"pasta"},"sessionId":"`+start.SessionID+`"}`))
		if status != 404 || len(searchesBy(tools, "yy-other")) != 0 {
			t.Fatalf("another user's session: %d %s", status, body)
		}
	})

	t.Run("text over SSE", func(t *testing.T) {
		resp := postChat(t, ctx, base, mint(t, "yy-text", "", ""), `{"message":"Any quick pasta ideas?"}`)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("POST /v1/chat: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		events := parseEvents(t, raw)
		// The contract's events in order, each kind collapsed to one: the
		// session, the thinking status, the search as a tool with its
		// recipe cards early (the seed's progressive rendering), the answer's
		// text, then stream_complete and done.
		var kinds []string
		for _, e := range events {
			k := e.Type
			if k == "status" {
				k += ":" + e.Data["status"].(string) + ":" + e.Data["state"].(string)
			}
			if e.Data["type"] != e.Type {
				t.Fatalf("event %s carries type %v", e.Type, e.Data["type"])
			}
			if len(kinds) == 0 || kinds[len(kinds)-1] != k {
				kinds = append(kinds, k)
			}
		}
		want := []string{"session", "status:thinking:start", "status:thinking:complete", "status:searching:start", "tool",
			"partial", "status:searching:complete", "status:thinking:start", "status:thinking:complete", "content", "stream_complete", "done"}
		if !slices.Equal(kinds, want) {
			t.Fatalf("events\n%v\nwant\n%v", kinds, want)
		}
		var partial, done map[string]any
		var text string
		for _, e := range events {
			switch e.Type {
			case "partial":
				partial = e.Data
			case "content":
				text += e.Data["content"].(string)
			case "done":
				done = e.Data["response"].(map[string]any)
			}
		}
		cards, _ := json.Marshal(done["cards"])
		if partial["kind"] != "recipes" || !strings.Contains(string(cards), `"kind":"recipes"`) || strings.Count(string(cards), `"kind"`) != 1 ||
			done["message"] != text || text != yummyAnswer || done["language"] != "en" || len(searchesBy(tools, "yy-text")) != 1 {
			t.Fatalf("partial %v; done %v; text %q", partial, done, text)
		}
	})
}
