package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/voxgate/voxgate/internal/logbuf"
	"github.com/voxgate/voxgate/internal/testkit"
)

// @voxgate/client's voice in Chromium with real WebRTC on loopback: the
// package, bundled as an app would bundle it, places a call in each of the
// four modes through the gateway to the simulator, hears audio (an inbound
// RTP stat), sees the spoken answer's transcript and the scripted tool call
// run, and ends with the session's cost, which the gateway's record holds
// too. It runs in the loopback-only namespace the demo's voice tests use.
func TestClientVoiceInChromium(t *testing.T) {
	t.Parallel()
	if !inLoopbackNamespace(t) {
		return
	}
	bundle := clientBundle(t)
	for _, mode := range []string{"sideband", "direct", "relay", "live"} {
		t.Run(mode, func(t *testing.T) { clientVoice(t, bundle, mode) })
	}
}

// clientBundle builds the package's ESM into one script defining the
// global voxgate, with the esbuild that scripts/client-ts.sh installs.
func clientBundle(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "clients", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	esb := filepath.Join(dir, "node_modules", ".bin", "esbuild")
	out, err := exec.Command(esb, filepath.Join(dir, "dist", "esm", "index.js"), "--bundle", "--format=iife", "--global-name=voxgate").Output()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the package's bundle (run scripts/client-ts.sh): %v", err)
		}
		t.Skipf("the package's bundle is missing: run scripts/client-ts.sh (%v)", err)
	}
	return string(out)
}

// clientPage is voiceBrowser's gateway and Chromium on one of its pages
// with the package loaded. The gateway's log is kept for a failure to show.
type clientPage struct {
	m   *Main
	b   *browser
	log *logbuf.Buffer
}

func newClientPage(t *testing.T, bundle string) *clientPage {
	t.Helper()
	m, b, logs := voiceBrowser(t, nil)
	p := &clientPage{m: m, b: b, log: logs}
	// An origin of the gateway's, so the calls are same-origin as an app's own would be.
	p.b.run(t, chromedp.Navigate(m.URL()+"/demo"))
	p.b.waitJS(t, "the page", `document.readyState === 'complete'`)
	p.load(t, bundle)
	return p
}

// load runs script in the page under the page's own policy, as a script
// the page loaded would run: DevTools' evaluation lifts a policy's ban on
// eval unless told not to, and a library that tests for eval once (as
// zod does, inside @openai/agents-realtime) would then use it later, in
// its event handlers, where the policy refuses it.
func (p *clientPage) load(t *testing.T, script string) {
	t.Helper()
	strict := func(e *runtime.EvaluateParams) { e.AllowUnsafeEvalBlockedByCSP = new(false) }
	if _, err := chromedp.Run(p.b.ctx, chromedp.Evaluate[chromedp.Void](script+";0", strict)); err != nil {
		t.Fatalf("loading a script: %v\nconsole:\n%s", err, p.b.console())
	}
}

// wait polls expr until it is true; a timeout shows the page's state, what
// the browser reported (the URLs it failed to load among it) and the
// gateway's log.
func (p *clientPage) wait(t *testing.T, what, expr string) {
	t.Helper()
	ok, err := chromedp.Run(p.b.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(60*time.Second)))
	if err == nil && ok {
		return
	}
	state, _ := chromedp.Run(p.b.ctx, chromedp.Evaluate[string](`JSON.stringify(window.__r)`))
	t.Fatalf("waiting for %s (%s): %v\nstate: %s\nconsole:\n%s\ngateway log:\n%s", what, expr, err, state, p.b.console(), p.log.String())
}

func clientVoice(t *testing.T, bundle, mode string) {
	p := newClientPage(t, bundle)
	m, b := p.m, p.b
	user := mint(t, "client-voice-"+mode, "", "pro")
	_ = evalJS[any](t, b, `window.__r = { events: [], tools: [], said: [] }; (async () => {
		const r = window.__r;
		try {
			const c = voxgate.createClient({ baseUrl: location.origin, token: () => `+jsString(user)+` });
			const mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true } });
			const call = await c.voice.start({ mode: `+jsString(mode)+`, stream: mic });
			r.direct = call.direct;
			call.on('quota', (e) => (r.quota = e.seconds_remaining));
			call.on('tool', (e) => r.tools.push(e.name));
			call.on('transcript', (e) => r.said.push(e.role));
			call.on('event', (e) => r.events.push(e.type));
			window.__call = call;
			r.started = true;
		} catch (e) { r.error = String(e && e.message || e); }
	})(); 0`)
	p.wait(t, "the call", `!!(window.__r.started || window.__r.error)`)
	if e := evalJS[any](t, b, `window.__r.error || null`); e != nil {
		t.Fatalf("start: %v\nconsole:\n%s\ngateway log:\n%s", e, b.console(), p.log.String())
	}
	// The inbound audio stat, read as the call goes.
	_ = evalJS[any](t, b, `setInterval(async () => {
		(await window.__call.pc.getStats()).forEach((s) => { if (s.type === 'inbound-rtp' && s.kind === 'audio') window.__r.audio = s.packetsReceived; });
	}, 200); 0`)
	p.wait(t, "the answer's transcript and inbound audio", `window.__r.said.includes('assistant') && window.__r.audio > 0`)
	// The gateway ran the scripted search: a live call's delegation runs
	// it on the gateway's sideband, which the phone's channel does not
	// carry; in the other modes the package's tool event shows it too.
	admin := mint(t, "ops", "admin", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	testkit.Eventually(t, ctx, "search_recipes in the audit log", func() bool {
		status, _, body := call(t, "GET", m.URL()+"/v1/admin/audit", admin, nil)
		return status == 200 && strings.Contains(body, `"search_recipes"`)
	})
	if mode != "live" {
		p.wait(t, "the tool call", `window.__r.tools.includes('search_recipes')`)
	}
	_ = evalJS[any](t, b, `window.__call.end().then((s) => (window.__r.cost = s.cost), (e) => (window.__r.error = String(e.message))); 0`)
	p.wait(t, "the end's cost", `!!(window.__r.cost || window.__r.error)`)
	var got struct {
		Direct bool `json:"direct"`
		Quota  *int `json:"quota"`
		Cost   struct {
			CostMicros int64 `json:"cost_micros"`
		} `json:"cost"`
		Error string `json:"error"`
	}
	raw := evalJS[string](t, b, `JSON.stringify(window.__r)`)
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if got.Error != "" || got.Cost.CostMicros <= 0 || got.Quota == nil || *got.Quota <= 0 || got.Direct != (mode == "direct") {
		t.Errorf("the call: %s; want no error, a positive cost and quota, direct only in direct mode", raw)
	}
	// The gateway's record agrees: in mode, priced, with the usage it
	// observed or, direct, the usage the package reported.
	source := map[string]string{"direct": "client_reported"}[mode]
	if source == "" {
		source = "server_observed"
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
	if r := list.Items[0]; r.Mode != mode || r.UsageSource != source || r.CostMicros == nil || *r.CostMicros != got.Cost.CostMicros {
		t.Errorf("record %+v, want mode %s, usage %s, cost %d as the end answered", r, mode, source, got.Cost.CostMicros)
	}
}
