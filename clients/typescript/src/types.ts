// The wire types of the routes this package calls. Each closed set of names
// (error codes, request fields, event types, enums) is a constant the type
// is derived from, so test/drift.mjs can hold it against the server's
// /openapi.json: the client and the server cannot drift unnoticed.

/** DESIGN §5's error codes. */
export const ERROR_CODES = [
  'INVALID_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'TOOL_NOT_ALLOWED', 'NOT_FOUND', 'TOOL_NOT_FOUND',
  'SESSION_ENDED', 'CONFLICT', 'REQUEST_TIMEOUT', 'PAYLOAD_TOO_LARGE', 'TOOL_VALIDATION_ERROR',
  'VALIDATION_ERROR', 'METHOD_NOT_ALLOWED', 'AI_VALIDATION_ERROR', 'AI_PII_LEAK', 'AI_CONTENT_FILTERED',
  'IDEMPOTENCY_MISMATCH', 'RATE_LIMITED', 'CONCURRENT_LIMIT', 'QUOTA_EXCEEDED', 'AI_RATE_LIMITED',
  'AI_CONFIG_ERROR', 'AI_PARSE_ERROR', 'AI_UNAVAILABLE', 'UNAVAILABLE', 'AI_FEATURE_DISABLED', 'INTERNAL',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The fields of DESIGN §5's error object this package reads. */
export const ERROR_FIELDS = ['code', 'message', 'retry_after_s', 'request_id'] as const;

/** The body of POST /v1/chat. */
export interface ChatRequest {
  message?: string;
  session_id?: string;
  stream?: boolean;
  workflow?: string;
  context?: Record<string, unknown>;
  confirm?: { call_id: string; allow: boolean };
}
export const CHAT_REQUEST_FIELDS = ['message', 'session_id', 'stream', 'workflow', 'context', 'confirm'] as const;

export interface Card { kind: string; data: unknown }
export interface Suggestion { label: string; message: string; category?: string }
export interface Action { type: string; label: string; payload: Record<string, unknown> }
export interface DBWrite { table: string; operation: string; data: unknown; dry_run?: boolean }
export interface SafetyFlag { type: string; message: string; blocked?: boolean }
export interface TurnUsage {
  input_tokens: number; output_tokens: number; cost_micros: number;
  calls_used_today: number; calls_remaining_today: number;
  tokens_used_today: number; tokens_remaining_today: number; plan: string;
}

/** A turn's final response: the JSON of stream:false, the done event's response. */
export interface FinalResponse {
  version: '1.0';
  session_id: string;
  message_id: string;
  message: string;
  language: string;
  cards: Card[];
  cards_omitted?: number;
  suggestions: Suggestion[];
  actions: Action[];
  db_writes: DBWrite[];
  safety_flags: SafetyFlag[];
  degraded: boolean;
  usage: TurnUsage;
}
export const FINAL_RESPONSE_FIELDS = [
  'version', 'session_id', 'message_id', 'message', 'language', 'cards', 'cards_omitted',
  'suggestions', 'actions', 'db_writes', 'safety_flags', 'degraded', 'usage',
] as const;

export const STATUS_KINDS = ['thinking', 'searching', 'generating', 'enriching'] as const;
export const STATUS_STATES = ['start', 'complete'] as const;
export const TOOL_STATES = ['started', 'finished', 'failed'] as const;
export const CONFIRMATION_TIERS = ['standard', 'elevated'] as const;

/** The events of a chat turn's stream (DESIGN §7), by their `event:` name. */
export type ChatEvent =
  | { type: 'session'; session_id: string }
  | { type: 'status'; status: (typeof STATUS_KINDS)[number]; label: string; state: (typeof STATUS_STATES)[number] }
  | { type: 'content'; content: string }
  | { type: 'tool'; call_id: string; name: string; state: (typeof TOOL_STATES)[number] }
  | { type: 'partial'; kind: string; data: unknown }
  | { type: 'confirmation_required'; call_id: string; name: string; description: string; tier: (typeof CONFIRMATION_TIERS)[number] }
  | { type: 'stream_complete' }
  | { type: 'done'; response: FinalResponse }
  | { type: 'error'; code: ErrorCode; message: string; retry_after_s?: number };
export type ChatEventType = ChatEvent['type'];
export const CHAT_EVENT_TYPES = [
  'session', 'status', 'content', 'tool', 'partial', 'confirmation_required', 'stream_complete', 'done', 'error',
] as const;

/** One of GET /v1/chat/sessions's items. */
export interface ChatSession { id: string; created_at: string; last_active_at: string; message_count: number }
export const CHAT_SESSION_FIELDS = ['id', 'created_at', 'last_active_at', 'message_count'] as const;

/** DESIGN §5's paged list. */
export interface Page<T> { items: T[]; next_cursor: string | null }

/** GET /v1/chat/sessions/{id}/messages: the history, oldest first. */
export interface History { session_id: string; items: Array<Record<string, unknown>> }
export const HISTORY_FIELDS = ['session_id', 'items'] as const;

/** The gateway's voice modes (DESIGN §7), the values of POST /v1/voice/sessions' mode. */
export const VOICE_MODES = ['direct', 'sideband', 'relay', 'live'] as const;
export type VoiceMode = (typeof VOICE_MODES)[number];

/** The fields of POST /v1/voice/sessions' answer (VoiceStarted) that voice.start reads. */
export const VOICE_STARTED_FIELDS = ['session_id', 'mode', 'max_duration_s', 'quota', 'client_secret', 'realtime_url', 'sdp_url', 'ice_servers'] as const;

// Compile-time checks that each constant names exactly its type's keys: a
// field added to one and not the other fails the build.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type _Checks = [
  Assert<Same<keyof ChatRequest, (typeof CHAT_REQUEST_FIELDS)[number]>>,
  Assert<Same<keyof FinalResponse, (typeof FINAL_RESPONSE_FIELDS)[number]>>,
  Assert<Same<ChatEventType, (typeof CHAT_EVENT_TYPES)[number]>>,
  Assert<Same<keyof ChatSession, (typeof CHAT_SESSION_FIELDS)[number]>>,
  Assert<Same<keyof History, (typeof HISTORY_FIELDS)[number]>>,
];
