package tools

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"github.com/voxgate/voxgate/internal/config"
)

// SignatureHeader carries the webhook signature:
// t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t + "." + body)>.
const SignatureHeader = "X-Voxgate-Signature"

// Sign returns the SignatureHeader value for body sent at ts.
func Sign(secret []byte, ts time.Time, body []byte) string {
	t := strconv.FormatInt(ts.Unix(), 10)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(t))
	mac.Write([]byte("."))
	mac.Write(body)
	return "t=" + t + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

// webhookRequest is the body a receiver gets.
type webhookRequest struct {
	CallID    string          `json:"call_id"`
	UserID    string          `json:"user_id"`
	SessionID string          `json:"session_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// errRedirect stops the client at the first redirect: the URL is fixed by
// config, and a receiver must not be able to send the signed body (or the
// gateway) elsewhere.
var errRedirect = errors.New("redirects are not followed")

func webhookClient(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	cp.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	// Each call has its own deadline from the tool's timeout.
	cp.Timeout = 0
	return &cp
}

// webhook is a configured webhook tool's body.
type webhook struct {
	name    string
	url     string
	secret  []byte
	maxResp int64
	card    string // the kind of the card the answer becomes, or none
	partial bool   // the card goes out early, as a partial
	client  *http.Client
	now     func() time.Time
}

// newWebhookTool builds a tool from its tools.webhooks entry, checking
// what only a webhook has; prepare checks the rest as for any tool.
func newWebhookTool(w config.WebhookTool, getenv func(string) string, client *http.Client) (*Tool, error) {
	if u, err := url.Parse(w.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, broken("url", "must be an absolute http(s) URL")
	} else if u.User != nil {
		return nil, broken("url", "must not carry credentials; use secret_env for the signing secret")
	}
	if w.MaxResponseBytes < 0 || w.MaxResponseBytes > MaxWebhookMaxResponse {
		return nil, broken("max_response_bytes", "must be between 0 (default %d) and %d, got %d",
			DefaultWebhookMaxResponse, MaxWebhookMaxResponse, w.MaxResponseBytes)
	}
	if w.Card != "" && !cardKindRE.MatchString(w.Card) {
		return nil, broken("card", "%q must be 1–40 of a-z and _", w.Card)
	}
	if w.Partial && w.Card == "" {
		return nil, broken("partial", "needs card: the partial is the answer as a card of that kind")
	}
	if w.Parameters == nil {
		return nil, broken("parameters", "a JSON Schema is required (use {type: object} for none)")
	}
	if !envNameRE.MatchString(w.SecretEnv) {
		return nil, broken("secret_env", "must name the environment variable that holds the signing secret")
	}
	secret := getenv(w.SecretEnv)
	if secret == "" {
		return nil, broken("secret_env", "%s is not set: a webhook needs a signing secret", w.SecretEnv)
	}
	if len(secret) < 16 {
		return nil, broken("secret_env", "%s holds a secret shorter than 16 bytes", w.SecretEnv)
	}
	params, err := json.Marshal(w.Parameters)
	if err != nil {
		return nil, broken("parameters", "%v", err)
	}
	var output json.RawMessage
	if w.Output != nil {
		if output, err = json.Marshal(w.Output); err != nil {
			return nil, broken("output", "%v", err)
		}
	}
	maxResp := w.MaxResponseBytes
	if maxResp == 0 {
		maxResp = DefaultWebhookMaxResponse
	}
	h := &webhook{name: w.Name, url: w.URL, secret: []byte(secret), maxResp: maxResp, card: w.Card, partial: w.Partial, client: client, now: time.Now}
	tier := Tier(w.Tier)
	if tier == "" {
		tier = TierNone
	}
	return &Tool{
		Name: w.Name, Description: w.Description, Parameters: params, OutputSchema: output,
		Voice: w.Voice, Tier: tier, SafetyLevel: SafetyLevel(w.SafetyLevel), WritesTo: w.WritesTo,
		Plans: w.Plans, Timeout: w.Timeout, MaxTokens: w.MaxTokens, Measures: w.Measures,
		Run: h.run, source: "webhook",
	}, nil
}

// run POSTs the call and reads the answer. Every failure is a ToolError the
// model can read; none reveals the URL.
func (h *webhook) run(ctx context.Context, inv Invocation) (Outcome, error) {
	body, err := json.Marshal(webhookRequest{CallID: inv.CallID, UserID: inv.UserID,
		SessionID: inv.SessionID, Name: h.name, Arguments: inv.Args})
	if err != nil {
		return Outcome{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return Outcome{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "voxgate-webhook/1")
	req.Header.Set(SignatureHeader, Sign(h.secret, h.now(), body))
	inject(ctx, req.Header)
	resp, err := h.client.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, errRedirect):
			return Outcome{}, Failf("webhook_redirect", "The %s service answered with a redirect, which is not followed.", h.name)
		case ctx.Err() != nil:
			return Outcome{}, ctx.Err() // the executor reports the timeout
		}
		return Outcome{}, Failf("webhook_unreachable", "The %s service could not be reached.", h.name)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused.
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
		return Outcome{}, Failf("webhook_status", "The %s service answered with status %d.", h.name, resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, h.maxResp+1))
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, ctx.Err()
		}
		return Outcome{}, Failf("webhook_unreachable", "The %s service's answer could not be read.", h.name)
	}
	if int64(len(raw)) > h.maxResp {
		return Outcome{}, Failf("webhook_too_large", "The %s service's answer is larger than %d bytes.", h.name, h.maxResp)
	}
	if !json.Valid(raw) {
		return Outcome{}, Failf("webhook_bad_json", "The %s service's answer is not valid JSON.", h.name)
	}
	out := Outcome{Data: json.RawMessage(raw)}
	switch card := []Card{{Kind: h.card, Data: json.RawMessage(raw)}}; {
	case h.partial:
		out.Partials = card // the chat turn adds a partial to its cards too
	case h.card != "":
		out.Cards = card
	}
	return out, nil
}

// cardKindRE is a card kind the chat response accepts.
var cardKindRE = regexp.MustCompile(`^[a-z_]{1,40}$`)
