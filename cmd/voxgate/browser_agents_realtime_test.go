package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/voxgate/voxgate/internal/testkit"
)

// agentsRealtimeBundle is the browser bundle @openai/agents-realtime ships
// (the global OpenAIAgentsRealtime), which scripts/node-openai.sh installs
// at the version testdata/node's lock pins.
var agentsRealtimeBundle = filepath.Join("..", "..", "testdata", "node", "node_modules", "@openai", "agents-realtime", "dist", "bundle", "openai-realtime-agents.umd.js")

// OpenAI's own Realtime SDK beside our package: @openai/agents-realtime,
// unchanged, in Chromium with real WebRTC on loopback, places a direct-mode
// call with the client secret voxgate minted (its WebRTC transport posts
// the offer to the session's realtime_url, the simulator). The agent's
// function tools are the session's own, each answered through voxgate's
// /tool-calls; the SDK runs the scripted search_recipes, gives the model
// its output and hears the answer. The page ends the session with the usage
// the SDK's events carried, and the gateway's record and audit log have
// the call.
func TestAgentsRealtimeInChromium(t *testing.T) {
	t.Parallel()
	if !inLoopbackNamespace(t) {
		return
	}
	sdk, err := os.ReadFile(agentsRealtimeBundle)
	if err != nil {
		skipOrFail(t, "@openai/agents-realtime is missing (run scripts/node-openai.sh): %v", err)
		return
	}
	p := newClientPage(t, string(sdk))
	m, b := p.m, p.b
	user := mint(t, "agents-realtime", "", "pro")
	p.load(t, `window.__r = { events: [], tools: [], said: [], errors: [], usage: {} }; (async () => {
		const r = window.__r, A = OpenAIAgentsRealtime;
		const post = async (path, body) => {
			const resp = await fetch(path, { method: 'POST', body: JSON.stringify(body),
				headers: { Authorization: 'Bearer ' + `+jsString(user)+`, 'Content-Type': 'application/json' } });
			const text = await resp.text();
			if (!resp.ok) throw new Error(path + ': ' + resp.status + ' ' + text);
			return JSON.parse(text);
		};
		// As our package sums them: the usage a direct call reports at its end.
		const sum = (acc, u) => {
			for (const [k, v] of Object.entries(u || {})) {
				if (typeof v === 'number') acc[k] = (acc[k] || 0) + v;
				else if (v && typeof v === 'object') sum(acc[k] = acc[k] || {}, v);
				else if (k === 'type') acc[k] = v;
			}
			return acc;
		};
		try {
			const s = await post('/v1/voice/sessions', { mode: 'direct' });
			r.session = s.session_id;
			window.__end = (usage) => post('/v1/voice/sessions/' + encodeURIComponent(s.session_id) + '/end', { reason: 'user_hangup', usage });
			const tools = (s.tools || []).map((d) => A.tool({
				name: d.name, description: d.description || d.name, parameters: d.parameters, strict: false,
				execute: async (input, ctx, details) => {
					const call = details && details.toolCall;
					const out = await post('/v1/voice/sessions/' + encodeURIComponent(s.session_id) + '/tool-calls',
						{ call_id: call.callId, name: d.name, arguments: call.arguments });
					r.tools.push(d.name);
					r.toolDone = true;
					return out.output;
				},
			}));
			r.offered = tools.map((t) => t.name);
			const agent = new A.RealtimeAgent({ name: 'voxgate', instructions: s.instructions || 'You help people cook.', tools });
			const mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true } });
			const transport = new A.OpenAIRealtimeWebRTC({ baseUrl: s.realtime_url, mediaStream: mic, audioElement: document.getElementById('voice-audio') });
			const session = new A.RealtimeSession(agent, { transport, model: s.model });
			session.on('transport_event', (e) => {
				r.events.push(e.type);
				if (e.type === 'response.output_audio_transcript.done') r.said.push((r.toolDone ? 'after the tool: ' : '') + e.transcript);
				if (e.type === 'response.done') sum(r.usage, e.response && e.response.usage);
				if (e.type === 'error') r.errors.push(JSON.stringify(e));
			});
			session.on('error', (e) => r.errors.push(String((e && e.error && (e.error.message || JSON.stringify(e.error))) || e)));
			await session.connect({ apiKey: s.client_secret.value });
			window.__session = session;
			window.__pc = transport.connectionState.peerConnection;
			r.connected = true;
		} catch (e) { r.error = String(e && e.message || e); }
	})()`)
	p.wait(t, "the SDK's connection", `!!(window.__r.connected || window.__r.error)`)
	if e := evalJS[any](t, b, `window.__r.error || null`); e != nil {
		t.Fatalf("connect: %v\nstate: %s\nconsole:\n%s\ngateway log:\n%s", e, evalJS[string](t, b, `JSON.stringify(window.__r)`), b.console(), p.log.String())
	}
	_ = evalJS[any](t, b, `setInterval(async () => {
		(await window.__pc.getStats()).forEach((s) => { if (s.type === 'inbound-rtp' && s.kind === 'audio') window.__r.audio = s.packetsReceived; });
	}, 200); 0`)
	p.wait(t, "the tool's output given back and the answer after it, heard",
		`window.__r.tools.includes('search_recipes') && window.__r.said.some((s) => s.startsWith('after the tool: ')) && window.__r.audio > 0`)
	_ = evalJS[any](t, b, `(window.__session.close(), window.__end(window.__r.usage)).then((s) => (window.__r.cost = s.cost), (e) => (window.__r.error = String(e.message))); 0`)
	p.wait(t, "the end's cost", `!!(window.__r.cost || window.__r.error)`)
	raw := evalJS[string](t, b, `JSON.stringify(window.__r)`)
	var got struct {
		Offered []string `json:"offered"`
		Errors  []string `json:"errors"`
		Error   string   `json:"error"`
		Cost    struct {
			CostMicros int64 `json:"cost_micros"`
		} `json:"cost"`
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if got.Error != "" || len(got.Errors) != 0 || got.Cost.CostMicros <= 0 {
		t.Errorf("the call: %s; want no error and a positive cost", raw)
	}
	admin := mint(t, "ops", "admin", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	testkit.Eventually(t, ctx, "search_recipes in the audit log", func() bool {
		status, _, body := call(t, "GET", m.URL()+"/v1/admin/audit", admin, nil)
		return status == 200 && strings.Contains(body, `"search_recipes"`)
	})
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
	if r := list.Items[0]; r.Mode != "direct" || r.UsageSource != "client_reported" || r.CostMicros == nil || *r.CostMicros != got.Cost.CostMicros {
		t.Errorf("record %+v, want mode direct, usage client_reported, cost %d as the end answered", r, got.Cost.CostMicros)
	}
	t.Logf("the SDK's call: %s", raw)
}
