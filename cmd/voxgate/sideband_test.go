package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/sim"
	"github.com/voxgate/voxgate/sim/simtest"
)

// Sideband through the real Main and route table: voice.mode sideband
// makes it the default, the phone's offer goes through the gateway's sdp
// route with the user's token, the gateway holds the call, and the end's
// record is what the gateway observed.
func TestSidebandRoutes(t *testing.T) {
	t.Parallel()
	s, ts := simtest.NewServer(t, sim.Config{Latency: simtest.ZeroLatency()})
	m, _ := startMain(t, pgtest.URL(t), func(c *config.Config) {
		c.Voice.Mode = "sideband"
		c.Secrets.OpenAIAPIKey, c.Secrets.OpenAIBaseURL = simtest.TestKey, ts.URL+"/v1"
	})
	base := m.URL()
	alice := mint(t, "alice", "", "pro")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	status, _, body := call(t, "POST", base+"/v1/voice/sessions", alice, strings.NewReader(`{}`))
	var start struct {
		SessionID    string          `json:"session_id"`
		Mode         string          `json:"mode"`
		SDPURL       string          `json:"sdp_url"`
		ClientSecret json.RawMessage `json:"client_secret"`
	}
	if err := json.Unmarshal([]byte(body), &start); status != 201 || err != nil || start.Mode != "sideband" || start.ClientSecret != nil {
		t.Fatalf("start: %d %s", status, body)
	}
	phone := simtest.NewCaller(t)
	offer, err := phone.Offer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	post := func(tok string) (*http.Response, string) {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+start.SDPURL, strings.NewReader(offer))
		req.Header.Set("Content-Type", "application/sdp")
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, _ := post(""); resp.StatusCode != 401 {
		t.Fatalf("offer without a token: %d", resp.StatusCode)
	}
	resp, answer := post(alice)
	if resp.StatusCode != 201 || resp.Header.Get("Content-Type") != "application/sdp" {
		t.Fatalf("offer: %d %s", resp.StatusCode, answer)
	}
	if err := phone.Accept(answer); err != nil {
		t.Fatal(err)
	}
	if err := phone.WaitOpen(ctx); err != nil {
		t.Fatal(err)
	}
	if resp, body := post(alice); resp.StatusCode != 409 {
		t.Fatalf("second offer: %d %s", resp.StatusCode, body)
	}
	calls := s.Calls()
	for st, _ := s.Call(calls[0].ID); st.Sidebands == 0; st, _ = s.Call(calls[0].ID) {
		select {
		case <-ctx.Done():
			t.Fatal("the gateway never attached")
		case <-time.After(10 * time.Millisecond):
		}
	}
	status, _, body = call(t, "POST", base+"/v1/voice/sessions/"+start.SessionID+"/end", alice, strings.NewReader(`{}`))
	if status != 200 || !strings.Contains(body, `"usage_source":"server_observed"`) {
		t.Fatalf("end: %d %s", status, body)
	}
	if st, _ := s.Call(calls[0].ID); st.Status != "ended" || st.EndReason != "hangup" {
		t.Fatalf("the call after the end: %+v", st)
	}
}
