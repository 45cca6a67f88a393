// /demo: an app team's first look at chat (SSE over fetch) and voice
// (WebRTC, sideband through the gateway). All text goes in by textContent.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  let sessionID = '', busy = false;

  function line(cls, text) { const li = vg.el('li', text, cls); $('chat-log').appendChild(li); return li; }

  // sse reads a text/event-stream body and calls on(type, data) per event.
  async function sse(resp, on) {
    const reader = resp.body.getReader(), dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true }).replace(/\r\n/g, '\n');
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i); buf = buf.slice(i + 2);
        let type = 'message', data = '';
        for (const l of frame.split('\n')) {
          if (l.startsWith('event:')) type = l.slice(6).trim();
          else if (l.startsWith('data:')) data += l.slice(5).trim();
        }
        if (data) on(type, JSON.parse(data));
      }
    }
  }

  function card(kind, data) {
    const box = vg.el('div', undefined, 'card ' + kind);
    if (kind === 'recipe' || (data && data.recipes)) {
      for (const r of (data.recipes || [data])) {
        const c = vg.el('div', undefined, 'card recipe');
        c.appendChild(vg.el('h3', r.title || r.name || 'Recipe'));
        const bits = [r.cuisine, r.total_minutes && r.total_minutes + ' min', r.kcal && r.kcal + ' kcal'].filter(Boolean);
        c.appendChild(vg.el('div', bits.join(' · '), 'muted'));
        box.appendChild(c);
      }
      box.className = 'cards';
    } else {
      box.appendChild(vg.el('h3', kind));
      box.appendChild(vg.el('div', JSON.stringify(data), 'muted'));
    }
    return box;
  }

  // turn sends one chat request and renders its stream.
  async function turn(body) {
    if (busy) return;
    busy = true; $('chat-send').disabled = true;
    vg.state($('chat-state'), 'Thinking', 'loading');
    const steps = {}, tools = {};
    let bot = null;
    try {
      const resp = await vg.call('POST', '/v1/chat', body, 'text/event-stream');
      await sse(resp, (type, d) => {
        switch (type) {
          case 'session': sessionID = d.session_id; break;
          case 'status': {
            const li = steps[d.status] || (steps[d.status] = line('step', d.label || d.status));
            li.className = 'step ' + (d.state === 'complete' ? 'done' : 'run');
            li.dataset.status = d.status; break;
          }
          case 'tool': {
            const li = tools[d.call_id] || (tools[d.call_id] = line('step tool', ''));
            li.textContent = d.name + ': ' + d.state;
            li.className = 'step tool ' + (d.state === 'finished' ? 'done' : d.state === 'failed' ? 'failed' : 'run'); break;
          }
          case 'content':
            if (!bot) bot = line('bot', '');
            bot.textContent += d.content; break;
          case 'partial': $('chat-log').appendChild(vg.el('li')).appendChild(card(d.kind, d.data)); break;
          case 'confirmation_required': confirmCard(d); break;
          case 'error': line('err', d.message || 'Something went wrong; please try again.'); break;
          case 'done': vg.state($('chat-state'), ''); break;
        }
      });
      if ($('chat-state').classList.contains('loading')) vg.state($('chat-state'), '');
    } catch (e) {
      vg.state($('chat-state'), e instanceof vg.APIError ? e.message : 'The connection dropped; please try again.', 'error');
    } finally {
      busy = false; $('chat-send').disabled = false;
    }
  }

  function confirmCard(d) {
    const box = vg.el('div', undefined, 'card confirm');
    box.appendChild(vg.el('h3', 'Confirm: ' + d.name));
    box.appendChild(vg.el('p', d.description));
    const allow = vg.el('button', 'Allow'), deny = vg.el('button', 'Deny');
    allow.className = 'allow'; deny.className = 'deny';
    const answer = (ok) => () => {
      allow.disabled = deny.disabled = true;
      box.appendChild(vg.el('p', ok ? 'Allowed.' : 'Denied.', 'muted'));
      turn({ session_id: sessionID, confirm: { call_id: d.call_id, allow: ok } });
    };
    allow.addEventListener('click', answer(true)); deny.addEventListener('click', answer(false));
    box.appendChild(allow); box.appendChild(deny);
    $('chat-log').appendChild(vg.el('li')).appendChild(box);
  }

  // Voice: microphone → RTCPeerConnection → POST /v1/voice/sessions →
  // the session's sdp_url (sideband, live, relay: the gateway answers and
  // runs the tools) or its realtime_url (direct: the page posts its offer
  // to the provider with the session's client secret, runs each function
  // call through the gateway, and reports the usage it saw at the end).
  let call = null;

  function vline(cls, text) { const li = vg.el('li', text, cls); $('voice-log').appendChild(li); return li; }

  // sum adds a usage object into acc, field by field.
  function sum(acc, u) {
    for (const [k, v] of Object.entries(u || {})) {
      if (typeof v === 'number') acc[k] = (acc[k] || 0) + v;
      else if (v && typeof v === 'object') sum(acc[k] = acc[k] || {}, v);
      else if (k === 'type') acc[k] = v;
    }
    return acc;
  }

  // runTools runs a direct call's function calls, once the response that
  // made them is done, on the gateway, gives the model every output, then
  // asks for one new response: a response.create per call would ask before
  // the other outputs are in, or while a response is still active.
  async function runTools(c, calls) {
    for (const m of calls) {
      try {
        const r = vg.parse(await (await vg.call('POST', '/v1/voice/sessions/' + encodeURIComponent(c.id) + '/tool-calls',
          { call_id: m.call_id, name: m.name, arguments: m.arguments })).text());
        c.dc.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: m.call_id, output: r.output } }));
      } catch (e) { vline('step tool failed', 'tool ' + m.name + ': ' + e.message); }
    }
    c.dc.send(JSON.stringify({ type: 'response.create' }));
  }

  function onEvent(ev) {
    let m; try { m = JSON.parse(ev.data); } catch (_) { return; }
    const c = call;
    switch (m.type) {
      case 'conversation.item.input_audio_transcription.completed':
        vline('me', 'you: ' + m.transcript);
        if (c && c.direct) sum(c.heard, m.usage);
        break;
      case 'response.output_audio_transcript.done': case 'response.audio_transcript.done': vline('bot', m.transcript); break;
      case 'response.function_call_arguments.done':
        vline('step tool done', 'tool ' + (m.name || '') + ' ' + m.arguments);
        break;
      case 'response.done':
        if (c && c.direct && m.response) {
          sum(c.usage, m.response.usage);
          const calls = (m.response.output || []).filter((o) => o.type === 'function_call');
          if (calls.length) runTools(c, calls);
        }
        break;
    }
  }

  // directAnswer places a direct call: the offer goes to the provider
  // with the session's short-lived secret, never the user's token.
  async function directAnswer(s, sdp) {
    const r = await fetch(s.realtime_url, { method: 'POST', body: sdp,
      headers: { Authorization: 'Bearer ' + s.client_secret.value, 'Content-Type': 'application/sdp' } });
    if (!r.ok) throw new Error('The provider refused the call (' + r.status + ').');
    return r.text();
  }

  // reported is a direct call's usage for its end: the response.done
  // usages summed, with the transcriptions' as voxgate's transcription.
  function reported(c) {
    if (!c.direct || !Object.keys(c.usage).length) return undefined;
    if (c.heard.seconds !== undefined) c.heard.seconds = Math.round(c.heard.seconds * 1000) / 1000;
    return Object.keys(c.heard).length ? Object.assign({}, c.usage, { transcription: c.heard }) : c.usage;
  }

  async function startVoice() {
    const btn = $('voice');
    btn.disabled = true;
    vg.state($('voice-state'), 'Starting', 'loading');
    try {
      const mic = await navigator.mediaDevices.getUserMedia({ audio: true });
      const pc = new RTCPeerConnection();
      call = { pc, mic, id: '', timer: 0, direct: false, usage: {}, heard: {} };
      mic.getTracks().forEach((t) => pc.addTrack(t, mic));
      pc.ontrack = (e) => { $('voice-audio').srcObject = e.streams[0]; };
      const dc = call.dc = pc.createDataChannel('oai-events');
      dc.onmessage = onEvent;
      await pc.setLocalDescription(await pc.createOffer());
      const s = vg.parse(await (await vg.call('POST', '/v1/voice/sessions', { mode: $('voice-mode').value })).text());
      call.id = s.session_id;
      let answer;
      if (s.sdp_url) answer = await (await vg.call('POST', s.sdp_url, pc.localDescription.sdp, 'application/sdp')).text();
      else if (s.realtime_url && s.client_secret) { call.direct = true; answer = await directAnswer(s, pc.localDescription.sdp); }
      else throw new Error('The session came back in mode ' + s.mode + ' with nowhere to send the call.');
      await pc.setRemoteDescription({ type: 'answer', sdp: answer });
      let left = Number(s.quota && s.quota.seconds_remaining !== undefined ? Math.min(Number(s.quota.seconds_remaining), Number(s.max_duration_s)) : s.max_duration_s);
      $('voice-left').textContent = left;
      call.timer = setInterval(() => { left = Math.max(0, left - 1); $('voice-left').textContent = left; }, 1000);
      vg.state($('voice-state'), 'On a call (session ' + s.session_id + ')');
      btn.textContent = 'Hang up';
    } catch (e) {
      vg.state($('voice-state'), e.message || 'Voice could not start.', 'error');
      await hangUp(true);
    } finally { btn.disabled = false; }
  }

  async function hangUp(failed) {
    const c = call; call = null;
    $('voice').textContent = 'Start voice';
    if (!c) return;
    clearInterval(c.timer);
    c.pc.close(); c.mic.getTracks().forEach((t) => t.stop());
    if (!c.id) return;
    try {
      const r = vg.parse(await (await vg.call('POST', '/v1/voice/sessions/' + encodeURIComponent(c.id) + '/end', { reason: failed ? 'error' : 'user_hangup', usage: reported(c) })).text());
      $('voice-cost').textContent = vg.usd((r.cost || {}).cost_micros);
      if (!failed) vg.state($('voice-state'), 'Call ended.');
    } catch (e) { vg.state($('voice-state'), e.message, 'error'); }
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('chat-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const text = $('chat-input').value.trim();
      if (!text) return;
      if (!vg.token()) { vg.state($('chat-state'), 'Paste a token first.', 'error'); return; }
      $('chat-input').value = '';
      line('me', '').appendChild(vg.el('span', text));
      const body = { message: text };
      if (sessionID) body.session_id = sessionID;
      turn(body);
    });
    $('voice').addEventListener('click', () => (call ? hangUp(false) : startVoice()));
  });
})();
