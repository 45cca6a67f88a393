import { VoxgateError, errorFromBody } from './errors.js';
import { readSSE } from './sse.js';
import type { Transport } from './client.js';
import type { ChatEvent, ChatRequest, ChatSession, FinalResponse, History, Page } from './types.js';

export interface ChatOptions {
  signal?: AbortSignal;
  /** The conversation to continue; without it the gateway starts one (see the session event). */
  sessionId?: string;
  /**
   * A key under which the gateway keeps the turn's answer for 24 h: sending
   * the same request with it again replays the answer instead of running
   * (and billing) the turn twice. `true` makes a random one.
   */
  idempotencyKey?: string | true;
  /** A tool the first model call must use. */
  workflow?: string;
  /** What the app shows, as data for the model (at most 4 KB). */
  context?: Record<string, unknown>;
}

export interface ConfirmOptions extends Omit<ChatOptions, 'sessionId' | 'workflow'> {
  /** The session whose turn asked for the confirmation. */
  sessionId: string;
}

function randomKey(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return Date.now().toString(36) + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
}

/** POST /v1/chat and the session routes (DESIGN §7). */
export class Chat {
  readonly sessions: {
    list: (o?: { limit?: number; cursor?: string; signal?: AbortSignal }) => Promise<Page<ChatSession>>;
    delete: (id: string, o?: { signal?: AbortSignal }) => Promise<void>;
  };

  constructor(private readonly t: Transport) {
    this.sessions = {
      list: (o = {}) => {
        const q = new URLSearchParams();
        if (o.limit !== undefined) q.set('limit', String(o.limit));
        if (o.cursor) q.set('cursor', o.cursor);
        const qs = q.toString();
        return t.json('GET', '/v1/chat/sessions' + (qs ? '?' + qs : ''), { signal: o.signal });
      },
      delete: (id, o = {}) => t.json('DELETE', '/v1/chat/sessions/' + encodeURIComponent(id), { signal: o.signal }),
    };
  }

  /**
   * Runs one turn and yields its events as they arrive, ending after `done`
   * or `error`. A refusal before the stream (auth, bad input, quota) is
   * thrown as a VoxgateError from the first step of the loop; an `error`
   * event is yielded, the turn having begun. A stream cut before either end
   * throws VoxgateError UNAVAILABLE. Nothing is retried: send again with
   * the same idempotencyKey to get the stored answer without a second bill.
   */
  send(message: string, o: ChatOptions = {}): AsyncGenerator<ChatEvent> {
    return this.stream({ message, session_id: o.sessionId, workflow: o.workflow, context: o.context }, o);
  }

  /** Runs one turn with stream:false and resolves with its final response. */
  async reply(message: string, o: ChatOptions = {}): Promise<FinalResponse> {
    const body: ChatRequest = { message, session_id: o.sessionId, workflow: o.workflow, context: o.context, stream: false };
    return this.t.json<FinalResponse>('POST', '/v1/chat', { body, signal: o.signal, headers: this.keyHeader(o) });
  }

  /** Allows the call a confirmation_required event named, and streams the turn that runs it. */
  allow(callId: string, o: ConfirmOptions): AsyncGenerator<ChatEvent> {
    return this.confirm(callId, true, o);
  }

  /** Denies the call; the model reads that it was denied and answers. */
  deny(callId: string, o: ConfirmOptions): AsyncGenerator<ChatEvent> {
    return this.confirm(callId, false, o);
  }

  /** A session's messages, oldest first, with cards and actions rehydrated. */
  history(sessionId: string, o: { signal?: AbortSignal } = {}): Promise<History> {
    return this.t.json('GET', '/v1/chat/sessions/' + encodeURIComponent(sessionId) + '/messages', o);
  }

  private confirm(callId: string, allow: boolean, o: ConfirmOptions): AsyncGenerator<ChatEvent> {
    return this.stream({ session_id: o.sessionId, confirm: { call_id: callId, allow }, context: o.context }, o);
  }

  private keyHeader(o: ChatOptions): Record<string, string> | undefined {
    if (!o.idempotencyKey) return undefined;
    return { 'Idempotency-Key': o.idempotencyKey === true ? randomKey() : o.idempotencyKey };
  }

  private async *stream(req: ChatRequest, o: ChatOptions): AsyncGenerator<ChatEvent> {
    // JSON.stringify drops the undefined fields; the gateway refuses unknown ones.
    const resp = await this.t.request('POST', '/v1/chat', {
      body: req, signal: o.signal, headers: this.keyHeader(o), accept: 'text/event-stream',
    });
    if (!(resp.headers.get('content-type') ?? '').includes('text/event-stream')) {
      // A replayed answer may come whole; it is the same turn's end.
      const response = (await resp.json()) as FinalResponse;
      yield { type: 'session', session_id: response.session_id };
      yield { type: 'done', response };
      return;
    }
    if (!resp.body) throw new VoxgateError({ code: 'UNAVAILABLE', status: 0, message: 'The answer had no body.' });
    for await (const m of readSSE(resp.body)) {
      let data: Record<string, unknown>;
      try {
        data = JSON.parse(m.data);
      } catch {
        continue; // not an event of this API
      }
      const ev = { ...data, type: m.event } as ChatEvent;
      yield ev;
      if (ev.type === 'done' || ev.type === 'error') return;
    }
    if (o.signal?.aborted) throw o.signal.reason ?? new Error('aborted');
    throw new VoxgateError({
      code: 'UNAVAILABLE', status: 0, retry_after_s: 1,
      message: 'The connection dropped before the turn ended; send again with the same idempotency key.',
    });
  }
}

/** The VoxgateError an error event describes, for its shouldRetry and retryAfterMs. */
export function errorFromEvent(ev: Extract<ChatEvent, { type: 'error' }>): VoxgateError {
  return errorFromBody(200, ev);
}
