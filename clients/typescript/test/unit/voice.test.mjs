import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '../../dist/esm/index.js';

// FakePC stands in for RTCPeerConnection: it records what the call does and
// lets a test deliver oai-events messages on the data channel.
class FakePC {
  static last;
  constructor(config) { FakePC.last = this; this.config = config; this.tracks = []; this.sent = []; this.closed = false; this.ontrack = null; this.localDescription = null; }
  addTrack(t) { this.tracks.push(t); }
  createDataChannel(label) { this.label = label; const pc = this; return (this.dc = { readyState: 'open', onmessage: null, send(d) { pc.sent.push(JSON.parse(d)); } }); }
  async createOffer() { return { type: 'offer', sdp: 'v=0 offer' }; }
  async setLocalDescription(d) { this.localDescription = d; }
  async setRemoteDescription(d) { this.remote = d; }
  close() { this.closed = true; }
  deliver(m) { this.dc.onmessage({ data: JSON.stringify(m) }); }
}

// gateway answers like the gateway (and the provider, for direct mode) and
// records every request.
function gateway(mode) {
  const reqs = [];
  const json = (v) => new Response(JSON.stringify(v), { status: 200, headers: { 'Content-Type': 'application/json' } });
  const f = async (url, init) => {
    const u = new URL(url);
    reqs.push({ url: u.href, path: u.pathname, method: init.method, headers: init.headers, body: init.body });
    if (u.pathname === '/v1/voice/sessions') {
      const s = { session_id: 'vs_1', mode, model: 'gpt-realtime', voice: 'alloy', max_duration_s: 600, tools: [], quota: { seconds_remaining: 120 } };
      if (mode === 'direct') Object.assign(s, { client_secret: { value: 'ek_1' }, realtime_url: 'https://provider.test/v1/realtime/calls' });
      else s.sdp_url = 'https://gw.test/v1/voice/sessions/vs_1/sdp';
      if (mode === 'relay') s.ice_servers = [{ urls: ['turn:turn.test:3478'], username: 'u', credential: 'c' }];
      return json(s);
    }
    if (u.pathname.endsWith('/sdp') || u.host === 'provider.test') return new Response('v=0 answer', { status: 201 });
    if (u.pathname.endsWith('/tool-calls')) {
      const b = JSON.parse(init.body);
      return json({ call_id: b.call_id, name: b.name, output: '{"temp":21}', result: { temp: 21, cards: [{ kind: 'weather', data: { temp: 21 } }] }, safety_flags: [], replayed: false });
    }
    if (u.pathname.endsWith('/end')) return json({ session_id: 'vs_1', status: 'ended', cost: { cost_micros: 1234 } });
    return new Response('{}', { status: 404 });
  };
  return { reqs, f };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

test('sideband: the offer goes to sdp_url with the user token, events map, the gateway runs tools, end returns the cost', async () => {
  const g = gateway('sideband');
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: g.f, voice: { RTCPeerConnection: FakePC } });
  const mic = { tracks: [{ enabled: true, stop() { this.stopped = true; } }], getTracks() { return this.tracks; } };
  const call = await c.voice.start({ mode: 'sideband', stream: mic });
  const pc = FakePC.last;
  assert.equal(pc.label, 'oai-events');
  assert.equal(pc.tracks.length, 1);
  assert.deepEqual(JSON.parse(g.reqs[0].body), { mode: 'sideband' });
  assert.equal(g.reqs[1].path, '/v1/voice/sessions/vs_1/sdp');
  assert.equal(g.reqs[1].body, 'v=0 offer');
  assert.equal(g.reqs[1].headers['Content-Type'], 'application/sdp');
  assert.equal(g.reqs[1].headers.Authorization, 'Bearer tok');
  assert.deepEqual(pc.remote, { type: 'answer', sdp: 'v=0 answer' });
  assert.equal(call.direct, false);

  const seen = [];
  call.on('transcript', (e) => seen.push(['transcript', e]));
  call.on('tool', (e) => seen.push(['tool', e.name]));
  pc.deliver({ type: 'conversation.item.input_audio_transcription.completed', transcript: 'weather?' });
  pc.deliver({ type: 'response.output_audio_transcript.done', transcript: 'It is 21.' });
  pc.deliver({ type: 'response.done', response: { output: [{ type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{}' }], usage: { total_tokens: 9 } } });
  await tick();
  assert.deepEqual(seen, [['transcript', { role: 'user', text: 'weather?' }], ['transcript', { role: 'assistant', text: 'It is 21.' }], ['tool', 'get_weather']]);
  // The gateway runs a sideband call's tools: the app posts none and sends nothing.
  assert.equal(g.reqs.filter((r) => r.path.endsWith('/tool-calls')).length, 0);
  assert.equal(pc.sent.length, 0);

  call.mute();
  assert.equal(mic.tracks[0].enabled, false);
  call.mute(false);
  assert.equal(mic.tracks[0].enabled, true);

  let ended;
  call.on('ended', (e) => (ended = e));
  const s = await call.end();
  assert.equal(pc.closed, true);
  assert.equal(mic.tracks[0].stopped, true);
  assert.equal(s.cost.cost_micros, 1234);
  assert.equal(ended.cost.cost_micros, 1234);
  const endReq = g.reqs.at(-1);
  assert.equal(endReq.path, '/v1/voice/sessions/vs_1/end');
  // Sideband usage is the gateway's own; the app reports none.
  assert.deepEqual(JSON.parse(endReq.body), { reason: 'user_hangup' });
  await call.end();
  assert.equal(g.reqs.filter((r) => r.path.endsWith('/end')).length, 1, 'end is sent once');
});

test('direct: the offer goes to the provider with the client secret, function calls go to /tool-calls, usage is reported at the end', async () => {
  const g = gateway('direct');
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: g.f, voice: { RTCPeerConnection: FakePC } });
  const call = await c.voice.start({ mode: 'direct' });
  const pc = FakePC.last;
  const offerReq = g.reqs[1];
  assert.equal(offerReq.url, 'https://provider.test/v1/realtime/calls');
  assert.equal(offerReq.headers.Authorization, 'Bearer ek_1', 'never the user token');
  assert.equal(call.direct, true);

  const tools = [], cards = [];
  call.on('tool', (e) => tools.push(e));
  call.on('card', (e) => cards.push(e));
  pc.deliver({ type: 'conversation.item.input_audio_transcription.completed', transcript: 'hi', usage: { type: 'duration', seconds: 1.5 } });
  pc.deliver({ type: 'response.done', response: { output: [
    { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    { type: 'function_call', call_id: 'c2', name: 'get_weather', arguments: '{"city":"Bergen"}' },
  ], usage: { total_tokens: 10, input_token_details: { audio_tokens: 4 } } } });
  for (let i = 0; i < 10 && pc.sent.length < 3; i++) await tick();
  const calls = g.reqs.filter((r) => r.path === '/v1/voice/sessions/vs_1/tool-calls');
  assert.deepEqual(calls.map((r) => JSON.parse(r.body)), [
    { call_id: 'c1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    { call_id: 'c2', name: 'get_weather', arguments: '{"city":"Bergen"}' },
  ]);
  assert.equal(calls[0].headers.Authorization, 'Bearer tok');
  // Both outputs, then one response.create.
  assert.deepEqual(pc.sent, [
    { type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'c1', output: '{"temp":21}' } },
    { type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'c2', output: '{"temp":21}' } },
    { type: 'response.create' },
  ]);
  assert.equal(tools.length, 2);
  assert.equal(tools[0].output, '{"temp":21}');
  assert.deepEqual(cards[0], { kind: 'weather', data: { temp: 21 } });

  pc.deliver({ type: 'response.done', response: { output: [], usage: { total_tokens: 5, input_token_details: { audio_tokens: 1 } } } });
  await call.end();
  const end = JSON.parse(g.reqs.at(-1).body);
  // 10+5 tokens, 4+1 audio, the transcription's 1.5 s.
  assert.deepEqual(end, { reason: 'user_hangup', usage: { total_tokens: 15, input_token_details: { audio_tokens: 5 }, transcription: { type: 'duration', seconds: 1.5 } } });
});

test('quota and early events: the seconds left are the lesser of the quota and the cap; events before start returns still reach listeners', async () => {
  const g = gateway('relay');
  class EarlyPC extends FakePC {
    async setRemoteDescription(d) { await super.setRemoteDescription(d); this.deliver({ type: 'response.output_audio_transcript.done', transcript: 'Hello.' }); }
  }
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: g.f, voice: { RTCPeerConnection: EarlyPC } });
  const call = await c.voice.start({ mode: 'relay' });
  const quota = [], said = [];
  call.on('quota', (e) => quota.push(e.seconds_remaining));
  call.on('transcript', (e) => said.push(e.text));
  await tick();
  assert.equal(call.secondsRemaining, 120);
  assert.deepEqual(quota, [120]);
  assert.deepEqual(said, ['Hello.']);
});

test('without an RTCPeerConnection, start says what to pass', async () => {
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: gateway('sideband').f });
  await assert.rejects(c.voice.start(), /RTCPeerConnection/);
});

test('relay: the peer connection gets the session\'s TURN servers, so the offer can carry relayed candidates', async () => {
  const g = gateway('relay');
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: g.f, voice: { RTCPeerConnection: FakePC } });
  await c.voice.start({ mode: 'relay' });
  assert.deepEqual(FakePC.last.config, { iceServers: [{ urls: ['turn:turn.test:3478'], username: 'u', credential: 'c' }] });
  assert.equal(g.reqs[1].path, '/v1/voice/sessions/vs_1/sdp');
  const sb = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: gateway('sideband').f, voice: { RTCPeerConnection: FakePC } });
  await sb.voice.start({ mode: 'sideband' });
  assert.equal(FakePC.last.config, undefined, 'no servers, no configuration');
});

test('a peer connection that cannot be made ends the session it was for', async () => {
  const g = gateway('sideband');
  class Broken { constructor() { throw new Error('no WebRTC here'); } }
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: g.f, voice: { RTCPeerConnection: Broken } });
  await assert.rejects(c.voice.start(), /no WebRTC here/);
  assert.deepEqual(g.reqs.map((r) => r.path), ['/v1/voice/sessions', '/v1/voice/sessions/vs_1/end']);
  assert.deepEqual(JSON.parse(g.reqs[1].body), { reason: 'error' });
});

test('live: transcript deltas make lines, partial as they grow and whole when the other speaker starts or the call ends; mute tells the model', async () => {
  const g = gateway('live');
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: g.f, voice: { RTCPeerConnection: FakePC } });
  const call = await c.voice.start({ mode: 'live' });
  const pc = FakePC.last;
  const seen = [];
  call.on('transcript', (e) => seen.push(e));
  await tick();
  for (const d of ['Find', ' me', ' pasta']) pc.deliver({ type: 'session.input_transcript.delta', delta: d, start_ms: 0, end_ms: 1 });
  for (const d of ['One', ' moment.']) pc.deliver({ type: 'session.output_transcript.delta', delta: d });
  pc.deliver({ type: 'session.input_transcript.delta', delta: 'Thanks' });
  const whole = seen.filter((e) => !e.partial);
  assert.deepEqual(whole, [{ role: 'user', text: 'Find me pasta' }, { role: 'assistant', text: 'One moment.' }]);
  assert.deepEqual(seen.filter((e) => e.partial).map((e) => e.text), ['Find', 'Find me', 'Find me pasta', 'One', 'One moment.', 'Thanks']);

  call.mute();
  call.mute(false);
  assert.deepEqual(pc.sent, [{ type: 'session.input_audio.mute' }, { type: 'session.input_audio.unmute' }]);

  await call.end();
  assert.deepEqual(seen.at(-1), { role: 'user', text: 'Thanks' }, 'the line under way ends with the call');
  assert.equal(seen.filter((e) => !e.partial).length, 3);
});

test('realtime: transcript deltas grow a line per speaker, and the done or completed text makes it whole', async () => {
  const g = gateway('sideband');
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: g.f, voice: { RTCPeerConnection: FakePC } });
  const call = await c.voice.start({ mode: 'sideband' });
  const pc = FakePC.last;
  const seen = [];
  call.on('transcript', (e) => seen.push(e));
  await tick();
  pc.deliver({ type: 'response.output_audio_transcript.delta', delta: 'One' });
  // The user's transcription lands while the answer is under way: each speaker keeps its line.
  pc.deliver({ type: 'conversation.item.input_audio_transcription.delta', delta: 'pasta' });
  pc.deliver({ type: 'response.output_audio_transcript.delta', delta: ' moment' });
  pc.deliver({ type: 'conversation.item.input_audio_transcription.completed', transcript: 'Pasta, please.' });
  pc.deliver({ type: 'response.output_audio_transcript.done', transcript: 'One moment.' });
  assert.deepEqual(seen, [
    { role: 'assistant', text: 'One', partial: true },
    { role: 'user', text: 'pasta', partial: true },
    { role: 'assistant', text: 'One moment', partial: true },
    { role: 'user', text: 'Pasta, please.' },
    { role: 'assistant', text: 'One moment.' },
  ]);
  await call.end();
  assert.equal(seen.length, 5, 'a whole line is not sent again at the end');
});

test('the remote track, which comes while the answer is set, still reaches a listener added after start', async () => {
  class TrackPC extends FakePC {
    async setRemoteDescription(d) { await super.setRemoteDescription(d); this.ontrack({ track: 'audio', streams: ['remote'] }); }
  }
  const c = createClient({ baseUrl: 'https://gw.test', token: () => 'tok', fetch: gateway('sideband').f, voice: { RTCPeerConnection: TrackPC } });
  const call = await c.voice.start({ mode: 'sideband' });
  const got = [];
  call.on('track', (e) => got.push(e));
  await tick();
  assert.deepEqual(got, [{ track: 'audio', streams: ['remote'] }]);
});
