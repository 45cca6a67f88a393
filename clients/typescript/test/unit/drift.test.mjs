// The client's types against the OpenAPI document the gateway embeds and
// serves at /openapi.json (test/live checks the served one too).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { drift } from '../drift.mjs';

const doc = () => JSON.parse(readFileSync(new URL('../../../../cmd/voxgate/openapi.json', import.meta.url), 'utf8'));

test('the client and the OpenAPI document agree', () => {
  assert.deepEqual(drift(doc()), []);
});

test('a drift is reported', () => {
  const d = doc();
  d.components.schemas.Error.properties.error.properties.code.enum.push('NEW_CODE');
  delete d.paths['/v1/chat'].post.requestBody.content['application/json'].schema.properties.workflow;
  d.paths['/v1/chat'].post.responses['200'].content['application/json'].schema.required.push('cards_omitted');
  delete d.components.schemas.VoiceStarted.properties.ice_servers;
  delete d.paths['/v1/voice/sessions/{id}/sdp'];
  d.components.schemas.VoiceStart.properties.mode.enum = ['direct', 'sideband', 'relay', 'duplex'];
  assert.deepEqual(drift(d), [
    'error codes: the server has NEW_CODE, the client does not',
    'chat request fields: the client has workflow, the server does not',
    'cards_omitted is required in the document, optional in the client',
    'POST /v1/voice/sessions/{id}/sdp is not in the document',
    'voice modes: the client has live, the server does not',
    'voice modes: the server has duplex, the client does not',
    'voice start field ice_servers is not in the document',
  ]);
});
