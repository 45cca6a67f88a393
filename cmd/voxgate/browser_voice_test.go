package main

import (
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/internal/pgtest"
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

// demoVoice places one call in mode from /demo and checks what the page
// and the gateway show of it.
func demoVoice(t *testing.T, mode string) {
	m, b := voiceBrowser(t)
	user := mint(t, "voice-user", "", "pro")
	b.run(t, chromedp.Navigate(m.URL()+"/demo#token="+url.QueryEscape(user)))
	b.waitJS(t, "the page", `document.getElementById('token-state').textContent === 'token set'`)
	b.run(t, chromedp.SetValue(chromedp.CSS(`#voice-mode`), mode), chromedp.Click(chromedp.CSS(`#voice`)))
	b.waitJS(t, "the call", `document.getElementById('voice').textContent === 'Hang up' && /^\d+$/.test(document.getElementById('voice-left').textContent)`)
	b.waitJS(t, "the tool call and the spoken answer's transcript",
		`[...document.querySelectorAll('#voice-log .tool')].some(e => e.textContent.startsWith('tool search_recipes')) &&
		 document.querySelectorAll('#voice-log .bot').length > 0`)
	b.run(t, chromedp.Click(chromedp.CSS(`#voice`)))
	b.waitJS(t, "the session's cost", `/^\$\d+\.\d{6}$/.test(document.getElementById('voice-cost').textContent)`)
	if s := evalJS[string](t, b, `document.getElementById('voice-state').textContent`); s != "Call ended." {
		t.Errorf("voice state %q, want Call ended.", s)
	}
	// The gateway ran the call: the AI audit log has it.
	if status, _, body := call(t, "GET", m.URL()+"/v1/admin/audit", mint(t, "ops", "admin", ""), nil); status != 200 || !strings.Contains(body, "search_recipes") {
		t.Errorf("audit log: %d %s; want the voice session's search_recipes call", status, body)
	}
	// The session's record: in mode, priced, with usage the gateway
	// observed (sideband) or the page reported (direct).
	source := map[string]string{"sideband": "server_observed", "direct": "client_reported"}[mode]
	status, _, body := call(t, "GET", m.URL()+"/v1/admin/sessions?kind=voice", mint(t, "ops", "admin", ""), nil)
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
	if r := list.Items[0]; r.Mode != mode || r.UsageSource != source || r.CostMicros == nil || *r.CostMicros == 0 {
		t.Errorf("record %+v, want mode %s, usage %s, a cost", r, mode, source)
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
