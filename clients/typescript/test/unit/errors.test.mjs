import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, VoxgateError, errorFromBody, errorFromResponse, errorFromEvent, MAX_CLIENT_WAIT_S } from '../../dist/esm/index.js';

const json = (status, body, headers = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

test('a §5 body maps to every field', async () => {
  const e = await errorFromResponse(json(429, { error: {
    code: 'RATE_LIMITED', message: 'Busy.', retry_after_s: 12, request_id: 'r1', limit: 'requests_per_minute',
    resets_at: '2026-11-28T22:31:00Z' } }, { 'Retry-After': '12', 'X-Should-Retry': 'true' }));
  assert.ok(e instanceof VoxgateError && e instanceof Error);
  assert.equal(e.name, 'VoxgateError');
  assert.deepEqual([e.code, e.status, e.message, e.retry_after_s, e.request_id, e.resets_at, e.fields.limit],
    ['RATE_LIMITED', 429, 'Busy.', 12, 'r1', '2026-11-28T22:31:00Z', 'requests_per_minute']);
  assert.equal(e.shouldRetry, true);
  assert.equal(e.retryAfterMs(), 12000);
});

test('the server\'s X-Should-Retry has the last word', async () => {
  const e = await errorFromResponse(json(429, { error: { code: 'QUOTA_EXCEEDED', message: 'Spent.', retry_after_s: 30 } }, { 'X-Should-Retry': 'false' }));
  assert.equal(e.shouldRetry, false);
  assert.equal(e.retryAfterMs(), 30000, 'an app can still schedule it');
});

test('without the header: transient codes with a short wait', () => {
  const cases = [
    [{ code: 'RATE_LIMITED', retry_after_s: 5 }, 429, true, 5000],
    [{ code: 'AI_UNAVAILABLE', retry_after_s: MAX_CLIENT_WAIT_S }, 503, true, 60000],
    [{ code: 'QUOTA_EXCEEDED', retry_after_s: 37757 }, 429, false, 37757000],
    [{ code: 'CONFLICT' }, 409, true, undefined],
    [{ code: 'VALIDATION_ERROR' }, 422, false, undefined],
    [{ code: 'TOOL_NOT_FOUND', retry_after_s: 3 }, 404, false, undefined],
    [{ code: 'QUOTA_EXCEEDED', resets_at: '2026-11-29T00:00:00Z' }, 429, true, 3_600_000],
  ];
  const now = Date.parse('2026-11-28T23:00:00Z');
  for (const [body, status, retry, ms] of cases) {
    const e = errorFromBody(status, { error: { message: 'm', ...body } });
    assert.equal(e.shouldRetry, retry, JSON.stringify(body));
    assert.equal(e.retryAfterMs(now), ms, JSON.stringify(body));
  }
});

test('a body that is not §5 JSON still gives a code, a message and Retry-After', async () => {
  const e = await errorFromResponse(new Response('<html>bad gateway</html>', { status: 503, headers: { 'Retry-After': '7', 'X-Request-Id': 'rq' } }));
  assert.deepEqual([e.code, e.status, e.retry_after_s, e.request_id], ['UNAVAILABLE', 503, 7, 'rq']);
  assert.ok(e.message.length > 0);
  assert.equal((await errorFromResponse(new Response('', { status: 502 }))).code, 'INTERNAL');
});

test('a stream\'s error event maps too', () => {
  const e = errorFromEvent({ type: 'error', code: 'AI_UNAVAILABLE', message: 'Down.', retry_after_s: 2 });
  assert.deepEqual([e.code, e.status, e.shouldRetry, e.retryAfterMs()], ['AI_UNAVAILABLE', 200, true, 2000]);
});

test('a 401 asks the token provider once more, with refresh, and sends again', async () => {
  const asked = [], sent = [];
  const fetch = async (url, init) => {
    sent.push(init.headers.Authorization);
    return init.headers.Authorization === 'Bearer fresh' ? json(200, { items: [], next_cursor: null })
      : json(401, { error: { code: 'UNAUTHORIZED', message: 'Sign in again.' } });
  };
  let n = 0;
  const c = createClient({ baseUrl: 'http://gw/', fetch, token: (o) => { asked.push(o.refresh); return n++ === 0 ? 'stale' : 'fresh'; } });
  assert.deepEqual(await c.chat.sessions.list({ limit: 5 }), { items: [], next_cursor: null });
  assert.deepEqual(asked, [false, true]);
  assert.deepEqual(sent, ['Bearer stale', 'Bearer fresh']);

  // A second 401 is the answer: no third try.
  const c2 = createClient({ baseUrl: 'http://gw', fetch, token: () => 'stale' });
  sent.length = 0;
  await assert.rejects(c2.chat.sessions.list(), (e) => e instanceof VoxgateError && e.code === 'UNAUTHORIZED' && e.status === 401);
  assert.equal(sent.length, 2);
});

test('a stream cut before done or error throws; nothing is retried', async () => {
  let calls = 0;
  const fetch = async () => {
    calls++;
    return new Response('event: session\ndata: {"type":"session","session_id":"s"}\n\n', { headers: { 'Content-Type': 'text/event-stream' } });
  };
  const c = createClient({ baseUrl: 'http://gw', fetch, token: () => 't' });
  const got = [];
  await assert.rejects(async () => { for await (const ev of c.chat.send('hi', { idempotencyKey: 'k1' })) got.push(ev.type); },
    (e) => e instanceof VoxgateError && e.code === 'UNAVAILABLE' && e.status === 0);
  assert.deepEqual(got, ['session']);
  assert.equal(calls, 1);
});

test('aborting a turn ends the loop with the abort, not a retry', async () => {
  let calls = 0;
  const fetch = async (url, init) => (calls++, new Response(new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode('event: session\ndata: {"type":"session","session_id":"s"}\n\n'));
      init.signal.addEventListener('abort', () => c.error(init.signal.reason));
    },
  }), { headers: { 'Content-Type': 'text/event-stream' } }));
  const c = createClient({ baseUrl: 'http://gw', fetch, token: () => 't' });
  const ac = new AbortController();
  const got = [];
  await assert.rejects(async () => {
    for await (const ev of c.chat.send('hi', { signal: ac.signal })) { got.push(ev.type); ac.abort(); }
  }, (e) => e.name === 'AbortError');
  assert.deepEqual(got, ['session']);
  assert.equal(calls, 1);
});
