// /demo: chat and voice through @voxgate/client, the package an app ships.
// This is the source; web/static/demo.js is it bundled with the package
// (clients/typescript: npm run demo), and a test holds the two in step.
// Page furniture (the token, messages, elements) is common.js's `vg`; all
// text goes in by textContent.
import { createClient, VoxgateError } from '../../clients/typescript/src/index.ts';

const $ = (id) => document.getElementById(id);
const client = createClient({ baseUrl: location.origin, token: () => vg.token() });

// say is what the page shows for a failure: the gateway's refusal in the
// words common.js uses for every page; the package's own (a stream cut,
// status 0) as it puts it.
function say(e) {
  if (e instanceof VoxgateError && e.status) {
    return vg.friendly(e.status, { error: { ...e.fields, message: e.message, retry_after_s: e.retry_after_s } });
  }
  return (e && e.message) || 'The connection dropped; please try again.';
}

function card(kind, data) {
  const recipes = kind === 'recipe' ? [data] : (data && data.recipes) || null;
  if (!recipes) {
    const box = vg.el('div', undefined, 'card ' + kind);
    box.append(vg.el('h3', kind), vg.el('div', JSON.stringify(data), 'muted'));
    return box;
  }
  const box = vg.el('div', undefined, 'cards');
  for (const r of recipes) {
    const c = vg.el('div', undefined, 'card recipe');
    const bits = [r.cuisine, r.total_minutes && r.total_minutes + ' min', r.kcal && r.kcal + ' kcal'].filter(Boolean);
    c.append(vg.el('h3', r.title || r.name || 'Recipe'), vg.el('div', bits.join(' · '), 'muted'));
    box.append(c);
  }
  return box;
}

// Chat: one turn at a time, each the package's stream of typed events.
let sessionId = '', busy = false;
const log = (el) => $('chat-log').appendChild(vg.el('li')).appendChild(el);
const line = (cls, text) => $('chat-log').appendChild(vg.el('li', text, cls));

async function turn(events) {
  if (busy) return;
  busy = true;
  $('chat-send').disabled = true;
  vg.state($('chat-state'), 'Thinking', 'loading');
  const steps = {}, tools = {};
  let bot = null;
  try {
    for await (const ev of events) {
      switch (ev.type) {
        case 'session': sessionId = ev.session_id; break;
        case 'status': {
          const li = steps[ev.status] || (steps[ev.status] = line('step', ev.label || ev.status));
          li.className = 'step ' + (ev.state === 'complete' ? 'done' : 'run');
          li.dataset.status = ev.status;
          break;
        }
        case 'tool': {
          const li = tools[ev.call_id] || (tools[ev.call_id] = line('step tool', ''));
          li.textContent = ev.name + ': ' + ev.state;
          li.className = 'step tool ' + ({ finished: 'done', failed: 'failed' }[ev.state] || 'run');
          break;
        }
        case 'content': (bot = bot || line('bot', '')).textContent += ev.content; break;
        case 'partial': log(card(ev.kind, ev.data)); break;
        case 'confirmation_required': confirmCard(ev); break;
        case 'error': line('err', ev.message + (ev.retry_after_s ? ' Try again in ' + ev.retry_after_s + ' s.' : '')); break;
        case 'done': suggest(ev.response.suggestions); break;
      }
    }
    vg.state($('chat-state'), '');
  } catch (e) {
    vg.state($('chat-state'), say(e), 'error');
  } finally {
    busy = false;
    $('chat-send').disabled = false;
  }
}

// suggest offers the turn's follow-ups as buttons that send them.
function suggest(list) {
  $('chat-suggest').replaceChildren(...(list || []).slice(0, 4).map((s) => {
    const b = vg.el('button', s.label, 'suggest');
    b.type = 'button';
    b.addEventListener('click', () => ask(s.message));
    return b;
  }));
}

function confirmCard(ev) {
  const box = vg.el('div', undefined, 'card confirm');
  const allow = vg.el('button', 'Allow', 'allow'), deny = vg.el('button', 'Deny', 'deny');
  const answer = (ok) => () => {
    allow.disabled = deny.disabled = true;
    box.append(vg.el('p', ok ? 'Allowed.' : 'Denied.', 'muted'));
    turn(client.chat[ok ? 'allow' : 'deny'](ev.call_id, { sessionId }));
  };
  allow.addEventListener('click', answer(true));
  deny.addEventListener('click', answer(false));
  box.append(vg.el('h3', 'Confirm: ' + ev.name), vg.el('p', ev.description), allow, ' ', deny);
  log(box);
}

function ask(text) {
  if (!vg.token()) return vg.state($('chat-state'), 'Paste a token first.', 'error');
  line('me', '').append(vg.el('span', text));
  suggest([]);
  // The key makes a resend of this turn a replay, never a second bill.
  turn(client.chat.send(text, { sessionId: sessionId || undefined, idempotencyKey: true }));
}

// Voice: the package starts the session, places the WebRTC call in the
// chosen mode (running a direct call's tools through the gateway itself)
// and ends it with its cost; the page shows what the call's events say.
let call = null, timer = 0;
const vline = (cls, text) => $('voice-log').appendChild(vg.el('li', text, cls));

function listen(c) {
  const open = {}; // each speaker's line being said
  c.on('track', (e) => { $('voice-audio').srcObject = e.streams[0] || new MediaStream([e.track]); });
  c.on('transcript', (e) => {
    const li = open[e.role] || (open[e.role] = vline(e.role === 'user' ? 'me' : 'bot', ''));
    li.textContent = (e.role === 'user' ? 'you: ' : '') + e.text;
    li.classList.toggle('partial', !!e.partial);
    if (!e.partial) delete open[e.role];
  });
  c.on('tool', (e) => vline('step tool ' + (e.error ? 'failed' : 'done'), 'tool ' + e.name + ' ' + e.arguments + (e.error ? ': ' + say(e.error) : '')));
  c.on('card', (e) => $('voice-log').appendChild(vg.el('li')).append(card(e.kind, e.data)));
  c.on('quota', (e) => {
    let left = e.seconds_remaining;
    $('voice-left').textContent = left;
    clearInterval(timer);
    timer = setInterval(() => { left = Math.max(0, left - 1); $('voice-left').textContent = left; }, 1000);
  });
}

async function startVoice() {
  const btn = $('voice');
  btn.disabled = true;
  $('voice-cost').textContent = '–';
  vg.state($('voice-state'), 'Starting', 'loading');
  try {
    if (!vg.token()) throw new Error('Paste a token first.');
    const mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    call = await client.voice.start({ mode: $('voice-mode').value, stream: mic });
    listen(call);
    vg.state($('voice-state'), 'On a ' + call.session.mode + ' call (session ' + call.id + ')');
    btn.textContent = 'Hang up';
    $('voice-mute').disabled = false;
  } catch (e) {
    call = null;
    vg.state($('voice-state'), say(e) || 'Voice could not start.', 'error');
  } finally {
    btn.disabled = false;
  }
}

async function hangUp() {
  const c = call;
  call = null;
  clearInterval(timer);
  $('voice').textContent = 'Start voice';
  $('voice-mute').disabled = true;
  $('voice-mute').textContent = 'Mute';
  try {
    const s = await c.end();
    $('voice-cost').textContent = vg.usd(s && s.cost ? s.cost.cost_micros : null);
    vg.state($('voice-state'), 'Call ended.');
  } catch (e) {
    vg.state($('voice-state'), say(e), 'error');
  }
}

document.addEventListener('DOMContentLoaded', () => {
  $('chat-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = $('chat-input').value.trim();
    if (!text || busy) return;
    $('chat-input').value = '';
    ask(text);
  });
  $('voice').addEventListener('click', () => (call ? hangUp() : startVoice()));
  $('voice-mute').addEventListener('click', () => {
    if (!call) return;
    const on = $('voice-mute').textContent === 'Mute';
    call.mute(on);
    $('voice-mute').textContent = on ? 'Unmute' : 'Mute';
  });
});
