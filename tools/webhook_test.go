package tools

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/auth"
	"github.com/voxgate/voxgate/internal/config"
	"github.com/voxgate/voxgate/internal/pgtest"
)

const hookSecret = "whsec_test_0123456789abcdef"

// verifySignature is the receiver-side check exactly as the README prints
// it (TestReadmeSignatureSnippet); the tests prove the documented
// procedure accepts what the gateway sends and refuses what it must.
func verifySignature(secret []byte, header string, body []byte, now time.Time) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return errors.New("malformed signature header")
	}
	if age := now.Sub(time.Unix(t, 0)); age > 300*time.Second || age < -300*time.Second {
		return errors.New("signature too old")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "."))
	mac.Write(body) // the raw body bytes, before any JSON parsing
	want := hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return errors.New("signature mismatch")
	}
	return nil
}

type hookCase struct {
	name    string
	handler http.HandlerFunc
	wantErr string // ToolError code, "" for success
}

func hookExecutor(t *testing.T, url string, mod func(*config.WebhookTool)) *Executor {
	t.Helper()
	w := config.WebhookTool{Name: "book_class", Description: "Books a class.", URL: url, SecretEnv: "HOOK",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"class_id": map[string]any{"type": "integer"}}, "required": []any{"class_id"}},
		Timeout: 300 * time.Millisecond, MaxResponseBytes: 1024}
	if mod != nil {
		mod(&w)
	}
	reg := mustRegistry(t, RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{w}},
		Getenv: func(k string) string {
			if k == "HOOK" {
				return hookSecret
			}
			return ""
		}})
	return mustExecutor(t, pgtest.Pool(t), reg)
}

func TestWebhookSignatureVerifies(t *testing.T) {
	t.Parallel()
	var got struct {
		body []byte
		sig  string
		ct   string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.body, _ = io.ReadAll(r.Body)
		got.sig, got.ct = r.Header.Get(SignatureHeader), r.Header.Get("Content-Type")
		if err := verifySignature([]byte(hookSecret), got.sig, got.body, time.Now()); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"booked":true,"class":"Yoga"}`))
	}))
	t.Cleanup(srv.Close)
	e := hookExecutor(t, srv.URL+"/hooks/book", nil)

	c := chatCall("sess", "call-9", "book_class", `{"class_id": 7}`)
	c.Principal = auth.Principal{UserID: "user-42"}
	r, err := e.Execute(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != nil || r.Output != `{"booked":true,"class":"Yoga"}` {
		t.Fatalf("got %+v, want the receiver's answer", r)
	}
	var body map[string]any
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"call_id": "call-9", "user_id": "user-42", "session_id": "sess", "name": "book_class",
		"arguments": map[string]any{"class_id": float64(7)}}
	for k, v := range want {
		if gb, _ := json.Marshal(body[k]); string(gb) != mustJSON(v) {
			t.Errorf("body.%s: got %s, want %s", k, gb, mustJSON(v))
		}
	}
	if got.ct != "application/json" {
		t.Errorf("content type: got %q", got.ct)
	}
	// The documented check refuses a tampered body and an old timestamp.
	if verifySignature([]byte(hookSecret), got.sig, append(got.body, ' '), time.Now()) == nil {
		t.Error("a tampered body verified")
	}
	if verifySignature([]byte(hookSecret), got.sig, got.body, time.Now().Add(301*time.Second)) == nil {
		t.Error("a signature older than 300 s verified")
	}
	if verifySignature([]byte("wrong-secret-0123456789"), got.sig, got.body, time.Now()) == nil {
		t.Error("another secret verified")
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestWebhookFailures(t *testing.T) {
	t.Parallel()
	var redirected atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirected.Add(1)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(target.Close)
	cases := []hookCase{
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "db down at 10.0.0.7", 500) }, "webhook_status"},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			// Past the 2 s bound below: an executor that waited for the
			// hook would take this long.
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}, ErrCodeTimeout},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		}, "webhook_redirect"},
		{"oversize", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"x":"` + strings.Repeat("a", 2000) + `"}`))
		}, "webhook_too_large"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>ok</html>")) }, "webhook_bad_json"},
		{"output schema mismatch", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"booked":"yes"}`)) }, ErrCodeBadOutput},
		{"ok", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"booked":true}`)) }, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(c.handler)
			t.Cleanup(srv.Close)
			e := hookExecutor(t, srv.URL, func(w *config.WebhookTool) {
				w.Output = map[string]any{"type": "object", "properties": map[string]any{"booked": map[string]any{"type": "boolean"}}}
			})
			start := time.Now()
			r, err := e.Execute(context.Background(), chatCall("s", "c", "book_class", `{"class_id":1}`))
			if err != nil {
				t.Fatal(err)
			}
			// The 300 ms timeout, the call's commits and a loaded machine's
			// slack.
			if time.Since(start) > 2*time.Second {
				t.Fatalf("took %s, want the 300ms timeout respected", time.Since(start))
			}
			switch {
			case c.wantErr == "" && r.Error != nil:
				t.Fatalf("got error %+v, want success", r.Error)
			case c.wantErr != "" && (r.Error == nil || r.Error.Code != c.wantErr):
				t.Fatalf("got %+v, want error %s", r.Error, c.wantErr)
			}
			if strings.Contains(r.Output, "127.0.0.1") || strings.Contains(r.Output, "10.0.0.7") {
				t.Fatalf("output %s leaks an address", r.Output)
			}
		})
	}
	if n := redirected.Load(); n != 0 {
		t.Fatalf("the redirect target was called %d times, want 0", n)
	}
}

// TestReadmeSignatureSnippet keeps the README's receiver snippet identical
// to verifySignature above, so the documented procedure is the tested one.
func TestReadmeSignatureSnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### Webhook tools: verifying a call")
	_, snippet, ok2 := strings.Cut(section, "```go\n")
	snippet, _, ok3 := strings.Cut(snippet, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README: no Go snippet under \"Webhook tools: verifying a call\"")
	}
	src, err := os.ReadFile("webhook_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, fn, _ := strings.Cut(string(src), "\nfunc verifySignature(")
	fn, _, _ = strings.Cut(fn, "\n}\n")
	if tested := "func verifySignature(" + fn + "\n}\n"; snippet != tested {
		t.Fatalf("the README snippet differs from the tested verifySignature:\n%s\nwant:\n%s", snippet, tested)
	}
}

// A webhook with `card` hands its answer to the app as a card of that
// kind, besides the model's output; a kind the response could not hold
// stops startup.
func TestWebhookAnswerAsCard(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"booked":true}`))
	}))
	t.Cleanup(srv.Close)
	e := hookExecutor(t, srv.URL, func(w *config.WebhookTool) { w.Card = "booking" })
	r, err := e.Execute(context.Background(), chatCall("sess", "call-1", "book_class", `{"class_id": 7}`))
	if err != nil || r.Error != nil {
		t.Fatalf("got %+v, %v", r, err)
	}
	if len(r.Cards) != 1 || r.Cards[0].Kind != "booking" || string(r.Cards[0].Data) != `{"booked":true}` {
		t.Fatalf("cards: got %+v, want one booking card with the answer", r.Cards)
	}
	plain := hookExecutor(t, srv.URL, nil)
	if r, err := plain.Execute(context.Background(), chatCall("sess", "call-2", "book_class", `{"class_id": 7}`)); err != nil || len(r.Cards) != 0 {
		t.Fatalf("without card: got %+v, %v, want no cards", r.Cards, err)
	}
	_, err = NewRegistry(RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{{
		Name: "x", URL: srv.URL, SecretEnv: "HOOK", Parameters: map[string]any{"type": "object"}, Card: "Bad-Kind"}}},
		Getenv: func(string) string { return hookSecret }})
	if err == nil || !strings.Contains(err.Error(), "card") {
		t.Fatalf("a bad card kind: got %v, want an error naming card", err)
	}

	// With partial, the same card goes out early (a partial), not as a
	// card of its own; partial without card stops startup.
	early := hookExecutor(t, srv.URL, func(w *config.WebhookTool) { w.Card, w.Partial = "booking", true })
	r, err = early.Execute(context.Background(), chatCall("sess", "call-3", "book_class", `{"class_id": 7}`))
	if err != nil || len(r.Cards) != 0 || len(r.Partials) != 1 || r.Partials[0].Kind != "booking" || string(r.Partials[0].Data) != `{"booked":true}` {
		t.Fatalf("partial: got cards %+v partials %+v, %v; want one booking partial", r.Cards, r.Partials, err)
	}
	_, err = NewRegistry(RegistryParams{Config: config.Tools{Webhooks: []config.WebhookTool{{
		Name: "x", URL: srv.URL, SecretEnv: "HOOK", Parameters: map[string]any{"type": "object"}, Partial: true}}},
		Getenv: func(string) string { return hookSecret }})
	if err == nil || !strings.Contains(err.Error(), "partial: needs card") {
		t.Fatalf("partial without card: got %v, want an error naming partial", err)
	}
}
