package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/voxgate/voxgate/internal/capacity"
)

// The voice case of voxgate bench (--mode voice): a voice session in
// direct mode, started and ended, as an app's call that lasts no time.
// The start mints the phone's secret at the mock (its
// /realtime/client_secrets), so what is measured is the gateway's own
// work around a call: auth, the voice quota's reservation, the session
// row, and at the end the cost record, the settlement and the release of
// the unused seconds. The time reported is the start's, what a user
// waits for before speaking; a session counts as failed unless its start
// is a 201 and its end a 200. Its direct baseline is the mock's mint.

// voiceUsage is what the phone reports at the end: one short exchange.
const voiceUsage = `{"input_tokens":120,"output_tokens":60,"input_token_details":{"text_tokens":20,"audio_tokens":100,"cached_tokens":0},` +
	`"output_token_details":{"text_tokens":10,"audio_tokens":50}}`

// runVoice starts and ends l's voice sessions at gw, a gateway's base URL.
func runVoice(ctx context.Context, client *http.Client, gw string, auth func(int) string, l capacity.Load) capacity.Result {
	return capacity.RunWith(ctx, l, func(ctx context.Context, c, _ int) (time.Duration, error) {
		began := time.Now()
		var started struct {
			SessionID string `json:"session_id"`
		}
		if err := postJSON(ctx, client, gw+"/v1/voice/sessions", auth(c), `{"mode":"direct"}`, http.StatusCreated, &started); err != nil {
			return 0, fmt.Errorf("start: %w", err)
		}
		took := time.Since(began)
		if started.SessionID == "" {
			return 0, fmt.Errorf("start: no session_id")
		}
		end := `{"reason":"user_hangup","usage":` + voiceUsage + `}`
		if err := postJSON(ctx, client, gw+"/v1/voice/sessions/"+started.SessionID+"/end", auth(c), end, http.StatusOK, nil); err != nil {
			return 0, fmt.Errorf("end: %w", err)
		}
		return took, nil
	})
}

// runMint is the voice case's direct baseline: the mock's mint alone.
func runMint(ctx context.Context, client *http.Client, mockURL string, l capacity.Load) capacity.Result {
	return capacity.RunWith(ctx, l, func(ctx context.Context, _, _ int) (time.Duration, error) {
		began := time.Now()
		err := postJSON(ctx, client, mockURL+"/realtime/client_secrets", "",
			`{"expires_after":{"anchor":"created_at","seconds":600},"session":{"type":"realtime","model":"gpt-realtime"}}`, http.StatusOK, nil)
		return time.Since(began), err
	})
}

// postJSON posts body to url, expects status want, and decodes the answer
// into out when out is not nil.
func postJSON(ctx context.Context, client *http.Client, url, auth, body string, want int, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(raw[:min(len(raw), 512)]))
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}
