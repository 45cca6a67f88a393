export { createClient, VoxgateClient, Transport } from './client.js';
export type { ClientOptions, RequestOptions, TokenProvider } from './client.js';
export { Chat, errorFromEvent } from './chat.js';
export type { ChatOptions, ConfirmOptions } from './chat.js';
export { VoxgateError, errorFromBody, errorFromResponse, MAX_CLIENT_WAIT_S } from './errors.js';
export type { VoxgateErrorInit } from './errors.js';
export { SSEParser, readSSE } from './sse.js';
export type { SSEMessage } from './sse.js';
export * from './types.js';
