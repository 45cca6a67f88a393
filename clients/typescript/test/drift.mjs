// Holds the client's names against the server's OpenAPI document: every
// error code, request field, response field, event type and enum the
// client relies on must be the document's, and the other way round where
// the set is closed. Returns the differences, [] when none.
import * as vg from '../dist/esm/index.js';

function same(what, mine, theirs, out) {
  const a = new Set(mine), b = new Set(theirs);
  for (const x of a) if (!b.has(x)) out.push(`${what}: the client has ${x}, the server does not`);
  for (const x of b) if (!a.has(x)) out.push(`${what}: the server has ${x}, the client does not`);
}

export function drift(doc) {
  const out = [];
  const err = doc.components.schemas.Error.properties.error;
  same('error codes', vg.ERROR_CODES, err.properties.code.enum, out);
  for (const f of vg.ERROR_FIELDS) if (!(f in err.properties)) out.push(`error field ${f} is not in the document`);

  const chat = doc.paths['/v1/chat'].post;
  same('chat request fields', vg.CHAT_REQUEST_FIELDS, Object.keys(chat.requestBody.content['application/json'].schema.properties), out);
  const confirm = chat.requestBody.content['application/json'].schema.properties.confirm;
  same('confirm fields', ['call_id', 'allow'], Object.keys(confirm.properties), out);
  if (!chat.parameters.some((p) => p.name === 'Idempotency-Key' && p.in === 'header')) out.push('Idempotency-Key is not a header of POST /v1/chat');
  const final = chat.responses['200'].content['application/json'].schema;
  same('final response fields', vg.FINAL_RESPONSE_FIELDS, Object.keys(final.properties), out);
  const required = new Set(final.required);
  for (const f of vg.FINAL_RESPONSE_FIELDS) {
    if (f !== 'cards_omitted' && !required.has(f)) out.push(`final response field ${f} is optional in the document, required in the client`);
  }
  if (required.has('cards_omitted')) out.push('cards_omitted is required in the document, optional in the client');
  // The document names the events in the route's summary.
  const named = (chat.summary.match(/Events: ([^.;]+)/)?.[1] ?? '').split(/,\s*|\s+or\s+/).map((s) => s.trim()).filter(Boolean);
  if (/one error event/.test(chat.summary)) named.push('error');
  same('chat event types', vg.CHAT_EVENT_TYPES, named, out);

  const list = doc.paths['/v1/chat/sessions'].get.responses['200'].content['application/json'].schema;
  same('page fields', ['items', 'next_cursor'], list.required, out);
  same('chat session fields', vg.CHAT_SESSION_FIELDS, Object.keys(list.properties.items.items.properties), out);
  const hist = doc.paths['/v1/chat/sessions/{id}/messages'].get.responses['200'].content['application/json'].schema;
  same('history fields', vg.HISTORY_FIELDS, Object.keys(hist.properties), out);
  if (!doc.paths['/v1/chat/sessions/{id}']?.delete?.responses?.['204']) out.push('DELETE /v1/chat/sessions/{id} no longer answers 204');

  // Voice: the routes a call uses and the fields it reads and sends.
  for (const p of ['/v1/voice/sessions', '/v1/voice/sessions/{id}/sdp', '/v1/voice/sessions/{id}/tool-calls', '/v1/voice/sessions/{id}/end']) {
    if (!doc.paths[p]?.post) out.push(`POST ${p} is not in the document`);
  }
  const s = doc.components.schemas;
  same('voice modes', vg.VOICE_MODES, s.VoiceStart?.properties?.mode?.enum ?? [], out);
  // The answer's mode is a plain string today; an enum there must agree too.
  if (s.VoiceStarted?.properties?.mode?.enum) same('voice modes answered', vg.VOICE_MODES, s.VoiceStarted.properties.mode.enum, out);
  const started = s.VoiceStarted?.properties ?? {};
  for (const f of vg.VOICE_STARTED_FIELDS) if (!(f in started)) out.push(`voice start field ${f} is not in the document`);
  if (!started.quota?.properties?.seconds_remaining) out.push('voice start quota has no seconds_remaining');
  if (!started.client_secret?.properties?.value) out.push('voice start client_secret has no value');
  for (const f of ['output', 'result', 'error']) if (!(f in (s.ToolResult?.properties ?? {}))) out.push(`tool result field ${f} is not in the document`);
  if (!('cost' in (s.VoiceSession?.properties ?? {}))) out.push('an ended voice session has no cost');
  const end = doc.paths['/v1/voice/sessions/{id}/end']?.post?.requestBody?.content?.['application/json']?.schema?.properties ?? {};
  for (const r of ['user_hangup', 'error']) if (!end.reason?.enum?.includes(r)) out.push(`end reason ${r} is not in the document`);
  if (!end.usage) out.push('the end request has no usage');
  return out;
}
