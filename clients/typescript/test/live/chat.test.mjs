// The package against a real gateway on the simulator, started by
// cmd/voxgate/client_ts_test.go, which passes its URL and tokens: a tool
// turn, a confirmation allowed, stream:false with an Idempotency-Key
// replayed, history and sessions, a 401 refreshed, and a plan's refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, VoxgateError } from '../../dist/esm/index.js';
import { drift } from '../drift.mjs';

const baseUrl = process.env.VOXGATE_URL;
const skip = baseUrl ? false : 'VOXGATE_URL is not set (cmd/voxgate/client_ts_test.go sets it)';
const client = (token = process.env.VOXGATE_TOKEN) => createClient({ baseUrl, token: () => token });

async function collect(it) {
  const evs = [];
  for await (const ev of it) evs.push(ev);
  return evs;
}

function checkTurn(evs) {
  assert.equal(evs[0].type, 'session');
  assert.deepEqual(evs.slice(-2).map((e) => e.type), ['stream_complete', 'done']);
  const done = evs.at(-1).response;
  assert.equal(done.message, evs.filter((e) => e.type === 'content').map((e) => e.content).join(''));
  assert.equal(done.session_id, evs[0].session_id);
  return done;
}

test('the served /openapi.json agrees with the client', { skip }, async () => {
  assert.deepEqual(drift(await (await fetch(baseUrl + '/openapi.json')).json()), []);
});

test('a turn with a tool, then a write confirmed, history and sessions', { skip }, async () => {
  const c = client();
  const evs = await collect(c.chat.send('find me a pasta recipe'));
  const done = checkTurn(evs);
  const tools = evs.filter((e) => e.type === 'tool').map((e) => `${e.name}:${e.state}`);
  assert.deepEqual(tools, ['search_recipes:started', 'search_recipes:finished']);
  assert.ok(evs.some((e) => e.type === 'status' && e.state === 'start'));
  assert.ok(done.cards.length > 0 && done.message.length > 0, 'cards and text');
  const sessionId = done.session_id;

  const ask = await collect(c.chat.send('I had oatmeal for breakfast, please log it', { sessionId }));
  const conf = ask.find((e) => e.type === 'confirmation_required');
  assert.ok(conf, `no confirmation in ${ask.map((e) => e.type)}`);
  assert.equal(conf.name, 'log_meal');
  assert.ok(['standard', 'elevated'].includes(conf.tier));
  checkTurn(ask);

  const ran = await collect(c.chat.allow(conf.call_id, { sessionId }));
  checkTurn(ran);
  assert.ok(ran.some((e) => e.type === 'tool' && e.call_id === conf.call_id && e.name === 'log_meal' && e.state === 'finished'),
    `the allowed call did not finish: ${JSON.stringify(ran.filter((e) => e.type === 'tool'))}`);
  // A confirmation is good once.
  await assert.rejects(collect(c.chat.allow(conf.call_id, { sessionId })), (e) => e instanceof VoxgateError && e.code === 'NOT_FOUND' && e.status === 404);

  const hist = await c.chat.history(sessionId);
  assert.equal(hist.session_id, sessionId);
  assert.ok(hist.items.length >= 6, `history has ${hist.items.length} messages`);
  const page = await c.chat.sessions.list({ limit: 100 });
  assert.ok(page.items.some((s) => s.id === sessionId) && 'next_cursor' in page);

  await c.chat.sessions.delete(sessionId);
  await assert.rejects(c.chat.history(sessionId), (e) => e instanceof VoxgateError && e.code === 'NOT_FOUND' && !e.shouldRetry && !!e.request_id);
});

test('stream:false, and the same Idempotency-Key replays the answer', { skip }, async () => {
  const c = client();
  const a = await c.chat.reply('find me a soup recipe', { idempotencyKey: 'ts-key-1' });
  assert.equal(a.version, '1.0');
  const b = await c.chat.reply('find me a soup recipe', { idempotencyKey: 'ts-key-1' });
  assert.deepEqual(b, a);
  await assert.rejects(c.chat.reply('something else', { idempotencyKey: 'ts-key-1' }),
    (e) => e instanceof VoxgateError && e.code === 'IDEMPOTENCY_MISMATCH' && e.status === 422);
});

test('a 401 asks the provider again and the request goes through', { skip }, async () => {
  const asked = [];
  const c = createClient({ baseUrl, token: ({ refresh }) => { asked.push(refresh); return refresh ? process.env.VOXGATE_TOKEN : 'expired'; } });
  assert.ok(Array.isArray((await c.chat.sessions.list()).items));
  assert.deepEqual(asked, [false, true]);
});

test('a plan\'s refusal is a VoxgateError saying when to come back', { skip }, async () => {
  const c = client(process.env.VOXGATE_TINY_TOKEN);
  await c.chat.reply('hello');
  const err = await collect(c.chat.send('hello again')).then(() => null, (e) => e);
  assert.ok(err instanceof VoxgateError, String(err));
  assert.equal(err.status, 429);
  assert.equal(err.code, 'RATE_LIMITED');
  assert.ok(err.retry_after_s >= 1 && err.retry_after_s <= 60, `retry_after_s ${err.retry_after_s}`);
  assert.ok(err.resets_at && Date.parse(err.resets_at) > Date.now() - 1000, `resets_at ${err.resets_at}`);
  assert.equal(err.fields.limit, 'requests_per_minute');
  assert.ok(err.request_id);
  assert.equal(err.shouldRetry, true);
  assert.equal(err.retryAfterMs(), err.retry_after_s * 1000);
});
