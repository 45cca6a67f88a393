import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SSEParser, readSSE } from '../../dist/esm/index.js';

const stream = [
  '\uFEFF: ping\n\n',
  'id: 1\nevent: session\ndata: {"type":"session","session_id":"s1"}\n\n',
  'id: 2\r\nevent: content\r\ndata: {"type":"content",\r\ndata: "content":"héllo 👋"}\r\n\r\n',
  ': ping\r\r',
  'id: 3\revent: done\rdata:{"x":1}\r\rdata\n\n',
  'event: stray\ndata: cut off at the end',
].join('');
const want = [
  { event: 'session', data: '{"type":"session","session_id":"s1"}', id: '1' },
  { event: 'content', data: '{"type":"content",\n"content":"héllo 👋"}', id: '2' },
  { event: 'done', data: '{"x":1}', id: '3' },
  { event: 'message', data: '', id: '3' },
];

function parseInChunks(text, cuts) {
  const p = new SSEParser(), out = [];
  let at = 0;
  for (const c of [...cuts, text.length]) {
    out.push(...p.push(text.slice(at, c)));
    at = c;
  }
  return out;
}

test('whole, the stream gives its events; comments, the BOM and an unended event do not', () => {
  assert.deepEqual(parseInChunks(stream, []), want);
});

test('cut at every single place, the events are the same', () => {
  for (let i = 0; i <= stream.length; i++) {
    assert.deepEqual(parseInChunks(stream, [i]), want, `cut at ${i} (${JSON.stringify(stream.slice(i - 2, i + 2))})`);
  }
});

test('cut at every pair of places, the events are the same', () => {
  for (let i = 0; i <= stream.length; i += 3) {
    for (let j = i; j <= stream.length; j += 2) assert.deepEqual(parseInChunks(stream, [i, j]), want, `cuts ${i}, ${j}`);
  }
});

test('a CR that ends a chunk and an LF that starts the next are one line end', () => {
  const p = new SSEParser();
  assert.deepEqual(p.push('data: a\r'), []);
  assert.deepEqual(p.push('\n\r'), [{ event: 'message', data: 'a' }]);
  assert.deepEqual(p.push('\ndata: b\n\n'), [{ event: 'message', data: 'b' }], 'CR LF across chunks, then an empty line');
});

test('readSSE decodes UTF-8 split across byte chunks', async () => {
  const bytes = new TextEncoder().encode(stream);
  for (const size of [1, 2, 3, 7]) {
    const body = new ReadableStream({
      start(c) {
        for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
        c.close();
      },
    });
    const got = [];
    for await (const m of readSSE(body)) got.push(m);
    assert.deepEqual(got, want, `chunks of ${size} bytes`);
  }
});
