package main

import (
	"context"
	"encoding/json"
	"math/big"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/internal/pgtest"
	"github.com/voxgate/voxgate/internal/testkit"
	"github.com/voxgate/voxgate/web"
)

// netnsEnv marks the copy of the test binary that runs inside a network
// namespace holding only loopback (DESIGN §15).
const netnsEnv = "VOXGATE_TEST_NETNS"

// The demo's voice button in Chromium with its fake microphone: a sideband
// call through the gateway to the simulator, whose scripted turn calls a
// tool the gateway runs; the page shows the transcript and the tool call,
// and after hang-up the session's cost.
//
// WebRTC must stay on loopback, and Chromium would gather candidates on
// every interface of the machine. So the test runs itself again inside a
// new network namespace with only lo up (unshare -n; root or user
// namespaces allow it): the gateway, the simulator and Chromium all live
// there, and PostgreSQL is reached over its Unix socket, which the
// namespace does not cut off.
func TestDemoVoiceInChromium(t *testing.T) {
	t.Parallel()
	if !inLoopbackNamespace(t) {
		return
	}
	demoVoice(t, "sideband")
}

// The same in direct mode: the page posts its offer to the simulator with
// the session's client secret (across origins, as a browser does with the
// provider), runs the scripted tool call through the gateway's tool-calls
// route, answers the model, and reports the usage it saw when it hangs up.
func TestDemoDirectVoiceInChromium(t *testing.T) {
	t.Parallel()
	if !inLoopbackNamespace(t) {
		return
	}
	demoVoice(t, "direct")
}

// The demo's voice in relay and live mode: a relayed call needs the
// session's TURN servers in the peer connection, a live call shows its
// transcript as the words come, and the delegated tool is on the gateway's
// side (its audit log), not the page's.
func TestDemoRelayAndLiveVoiceInChromium(t *testing.T) {
	t.Parallel()
	if !inLoopbackNamespace(t) {
		return
	}
	for _, mode := range []string{"relay", "live"} {
		t.Run(mode, func(t *testing.T) { demoVoice(t, mode) })
	}
}

// demoVoice places one call in mode from /demo and checks what the page
// and the gateway show of it: the page's script is the package's bundle
// (web's TestDemoBundleIsFresh), so this is the package driving the call.
func demoVoice(t *testing.T, mode string) {
	m, b, logs := voiceBrowser(t, nil)
	user := mint(t, "voice-user", "", "pro")
	b.run(t, chromedp.Navigate(m.URL()+"/demo#token="+url.QueryEscape(user)))
	b.waitJS(t, "the page", `document.getElementById('token-state').textContent === 'token set'`)
	// Lines said so far show as they grow, marked partial, in every mode.
	_ = evalJS[any](t, b, `window.__partial = 0; new MutationObserver(() => {
		if (document.querySelector('#voice-log .partial')) window.__partial++;
	}).observe(document.getElementById('voice-log'), { subtree: true, childList: true, characterData: true, attributes: true }); 0`)
	b.run(t, chromedp.SetValue(chromedp.CSS(`#voice-mode`), mode), chromedp.Click(chromedp.CSS(`#voice`)))
	b.waitJS(t, "the call", `document.getElementById('voice').textContent === 'Hang up' && /^\d+$/.test(document.getElementById('voice-left').textContent) ||
		document.getElementById('voice-state').classList.contains('error')`)
	if s := evalJS[string](t, b, `document.getElementById('voice-state').textContent`); !strings.HasPrefix(s, "On a "+mode+" call") {
		t.Fatalf("voice state %q, want on a %s call\nconsole:\n%s\ngateway log:\n%s", s, mode, b.console(), logs.String())
	}
	left := `document.getElementById('voice-left').textContent`
	if n := evalJS[string](t, b, left); n == "0" {
		t.Errorf("seconds remaining %s at the start", n)
	}
	// The page's tool line is the package's tool event; a live call's
	// delegation runs on the gateway's sideband, which the page never sees.
	tool := `[...document.querySelectorAll('#voice-log .tool')].some(e => e.textContent.startsWith('tool search_recipes')) && `
	if mode == "live" {
		tool = ""
	}
	b.waitJS(t, "the tool call and the spoken answer's transcript",
		tool+`[...document.querySelectorAll('#voice-log .bot:not(.partial)')].some(e => e.textContent) && window.__partial > 0`)
	// The gateway ran the call: the AI audit log has its tool call. Read
	// before the hang-up: in live mode the phone hears the answer straight
	// from the provider, and only the delegation's audit row says the
	// gateway's sideband is attached, which the record's usage needs (a
	// live session ended before its attach is unconfirmed, docs/voice.md).
	admin := mint(t, "ops", "admin", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	testkit.Eventually(t, ctx, "search_recipes in the audit log", func() bool {
		status, _, body := call(t, "GET", m.URL()+"/v1/admin/audit", admin, nil)
		return status == 200 && strings.Contains(body, `"search_recipes"`)
	})
	b.run(t, chromedp.Click(chromedp.CSS(`#voice`)))
	b.waitJS(t, "the session's cost", `/^\$\d+\.\d{6}$/.test(document.getElementById('voice-cost').textContent)`)
	if s := evalJS[string](t, b, `document.getElementById('voice-state').textContent`); s != "Call ended." {
		t.Errorf("voice state %q, want Call ended.", s)
	}
	// The session's record: in mode, priced as the page showed, with
	// usage the gateway observed or, direct, the page reported.
	source := "server_observed"
	if mode == "direct" {
		source = "client_reported"
	}
	status, _, body := call(t, "GET", m.URL()+"/v1/admin/sessions?kind=voice", admin, nil)
	var list struct {
		Items []struct {
			Mode        string `json:"mode"`
			UsageSource string `json:"usage_source"`
			CostMicros  *int64 `json:"cost_micros"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &list); status != 200 || err != nil || len(list.Items) != 1 {
		t.Fatalf("records: %d %s", status, body)
	}
	shown := evalJS[string](t, b, `document.getElementById('voice-cost').textContent`)
	if r := list.Items[0]; r.Mode != mode || r.UsageSource != source || r.CostMicros == nil || *r.CostMicros == 0 || web.Dollars(big.NewInt(*r.CostMicros)) != shown {
		t.Errorf("record %+v, want mode %s, usage %s, the cost the page shows (%s)", r, mode, source, shown)
	}
	shot := "demo-voice.png"
	if mode != "sideband" {
		shot = "demo-voice-" + mode + ".png"
	}
	b.screenshot(t, shot)
	b.noViolations(t)
}

// inLoopbackNamespace reports whether t runs inside the loopback-only
// namespace. When it does not, it runs t again in one and reports false
// once that run is over (t fails if the run failed): every browser test
// starts with
//
//	if !inLoopbackNamespace(t) { return }
func inLoopbackNamespace(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == "1" {
		return true
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		skipOrFail(t, "unshare is missing: %v", err)
		return false
	}
	env := append(os.Environ(), netnsEnv+"=1")
	if dir := os.Getenv("VOXGATE_TEST_ARTIFACTS"); dir == "" {
		env = append(env, "VOXGATE_TEST_ARTIFACTS="+t.TempDir())
	}
	if u := unixSocketURL(pgtest.AdminURL(t)); u != "" {
		env = append(env, "VOXGATE_TEST_DATABASE_URL="+u)
	} else {
		// No socket to reach the server through: the copy starts a private
		// cluster of its own inside the namespace.
		env = append(env, "VOXGATE_TEST_PROVISION=1", "TMPDIR="+t.TempDir())
	}
	cmd := exec.Command("unshare", "-n", "--", "sh", "-c", `ip link set lo up && exec "$@"`, "sh",
		os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count", "1", "-test.v")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil && strings.Contains(string(out), "unshare failed") {
		skipOrFail(t, "no network namespace here: %s", out)
		return false
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("in the loopback namespace: %v\n%s", err, out)
	}
	t.Logf("in the loopback namespace:\n%s", out)
	return false
}

// unixSocketURL is admin reached through the server's Unix socket in
// /var/run/postgresql, or "" when there is none.
func unixSocketURL(admin string) string {
	u, err := url.Parse(admin)
	if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	const dir = "/var/run/postgresql"
	if _, err := os.Stat(filepath.Join(dir, ".s.PGSQL."+port)); err != nil {
		return ""
	}
	q := u.Query()
	q.Set("host", dir)
	q.Set("port", port)
	u.Host, u.RawQuery = "", q.Encode()
	return u.String()
}

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}
