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
  return out;
}
