package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
)

// TestDevZeroSetup runs `voxgate dev` in an empty directory: it keeps a
// 0600 secret under ./.voxgate/, prints a working token for the bench plan,
// and stops cleanly on cancel.
func TestDevZeroSetup(t *testing.T) {
	dbURL := pgtest.URL(t)
	t.Chdir(t.TempDir())
	env := map[string]string{"VOXGATE_DATABASE_URL": dbURL, "VOXGATE_ADDR": "127.0.0.1:0"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &logbuf.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"dev"}, func(k string) string { return env[k] }, out, &bytes.Buffer{})
	}()

	var tok, base string
	// A bound for a hang, not a guess at how long a start takes: under
	// -race on a loaded 2-core machine dev's start (migrations, the demo's
	// seed, the SQL parser's WebAssembly build) has taken over 30 s.
	deadline := time.Now().Add(3 * time.Minute)
	for tok == "" && time.Now().Before(deadline) {
		for _, line := range strings.Split(out.String(), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "export TOKEN="); ok {
				tok = v
			}
			if v, ok := strings.CutPrefix(line, "voxgate dev is running at "); ok {
				base = strings.TrimSpace(v)
			}
		}
		select {
		case err := <-done:
			t.Fatalf("dev exited early: %v\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if tok == "" || base == "" {
		t.Fatalf("no token or URL printed:\n%s", out)
	}
	if !strings.Contains(out.String(), "Provider: the simulator at http://127.0.0.1:") {
		t.Fatalf("dev did not start the simulator:\n%s", out)
	}
	route := "route default: openai/gpt-6-luna, anthropic/claude-haiku-5-5, gemini/gemini-3.8-flash"
	if !strings.Contains(out.String(), route) {
		t.Fatalf("dev did not configure the default route over every kind (%q):\n%s", route, out)
	}
	// Both pages' links are printed with their tokens, the admin's opening
	// the finance API.
	var adminTok string
	for _, line := range strings.Split(out.String(), "\n") {
		if _, v, ok := strings.Cut(line, base+"/admin#token="); ok {
			adminTok = strings.TrimSpace(v)
		}
	}
	if !strings.Contains(out.String(), base+"/demo#token="+tok) || adminTok == "" {
		t.Fatalf("dev did not print the /demo and /admin links:\n%s", out)
	}
	if status, body := get(t, base+"/v1/admin/costs/summary", adminTok); status != 200 {
		t.Fatalf("the summary with dev's admin token: got %d %s, want 200", status, body)
	}
	status, body := get(t, base+"/v1/me", tok)
	if status != 200 || !strings.Contains(body, `"plan":"bench"`) {
		t.Fatalf("/v1/me with the dev token: got %d %s, want 200 on plan bench", status, body)
	}
	info, err := os.Stat(filepath.Join(devDir, "jwt-secret"))
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Fatalf("jwt-secret mode: got %o, want 600", mode)
	}
	// `voxgate token` signs with the same dev secret.
	var tokOut bytes.Buffer
	if err := run(ctx, []string{"token", "--sub", "other"}, func(string) string { return "" }, &tokOut, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if status, _ := get(t, base+"/v1/me", strings.TrimSpace(tokOut.String())); status != 200 {
		t.Fatalf("token from `voxgate token`: got %d, want 200", status)
	}
	devRouteFailsOver(t, ctx, base, tok, out.String())
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dev returned %v after cancel, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("dev did not stop after cancel")
	}
}

func TestUsageAndUnknownCommand(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, os.Getenv, &out, &errOut); err != nil || !strings.Contains(out.String(), "serve") {
		t.Fatalf("--help: got %v, %q", err, out.String())
	}
	if err := run(context.Background(), []string{"fly"}, os.Getenv, &out, &errOut); err == nil {
		t.Fatal("unknown command: got no error")
	}
	errOut.Reset()
	if err := run(context.Background(), []string{"token", "--help"}, os.Getenv, &out, &errOut); err == nil || !strings.Contains(errOut.String(), "-sub") {
		t.Fatalf("token --help: got %v, %q", err, errOut.String())
	}
}

// TestSimCommand runs `voxgate sim` and calls it as an OpenAI client would.
func TestSimCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	out := &logbuf.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"sim", "--addr", "127.0.0.1:0"}, os.Getenv, out, &bytes.Buffer{}) }()
	var base string
	testkit.Eventually(t, ctx, "the sim's URL", func() bool {
		if _, after, ok := strings.Cut(out.String(), "OPENAI_BASE_URL="); ok {
			base = strings.TrimSuffix(strings.TrimSpace(after), ")")
		}
		return base != ""
	})
	body := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}`
	req, _ := http.NewRequest("POST", base+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"chat.completion"`) {
		t.Fatalf("completion: got %d %s", resp.StatusCode, b)
	}
	req, _ = http.NewRequest("POST", base+"/chat/completions", strings.NewReader(body))
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("without a key: got %d, want 401", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("sim returned %v after cancel", err)
	}
}

// devRouteFailsOver checks that dev's route reaches the simulator through
// every configured kind: a chat turn is answered by OpenAI; with OpenAI's
// surface failing, by the next kind that answers (Gemini while no
// Anthropic adapter is built: its target is then not configured), and an
// admin sees every target on /v1/admin/providers.
func devRouteFailsOver(t *testing.T, ctx context.Context, base, tok, printed string) {
	t.Helper()
	_, rest, _ := strings.Cut(printed, "the simulator at ")
	simURL, _, _ := strings.Cut(rest, "/v1 ")
	if names := eventNames(t, postChat(t, ctx, base, tok, `{"message":"hello"}`)); len(names) == 0 || names[len(names)-1] != "done" {
		t.Fatalf("a dev chat turn: events %v, want done", names)
	}
	fault := `{"endpoint":"/v1/chat/completions","kind":"unavailable","fraction":1}`
	resp, err := http.Post(simURL+"/sim/faults", "application/json", strings.NewReader(fault))
	if err != nil || resp.StatusCode >= 300 {
		t.Fatalf("setting a fault at %s: %v %v", simURL, resp, err)
	}
	resp.Body.Close()
	resp = postChat(t, ctx, base, tok, `{"message":"hello","stream":false}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"degraded":false`) {
		t.Fatalf("with OpenAI failing: %d %s, want Gemini's answer", resp.StatusCode, body)
	}
	var admin bytes.Buffer
	if err := run(ctx, []string{"token", "--sub", "ops", "--role", "admin"}, func(string) string { return "" }, &admin, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	status, st := get(t, base+"/v1/admin/providers", strings.TrimSpace(admin.String()))
	if status != 200 || !strings.Contains(st, `"provider":"anthropic","model":"claude-haiku-5-5"`) ||
		!strings.Contains(st, `"provider":"openai","model":"gpt-6-luna","configured":true,"state":"closed","failures":2`) ||
		!strings.Contains(st, `"provider":"gemini","model":"gemini-3.8-flash","configured":true,"state":"closed","failures":0`) {
		t.Fatalf("GET /v1/admin/providers: %d %s", status, st)
	}
}
