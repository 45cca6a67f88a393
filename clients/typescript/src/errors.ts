import type { ErrorCode } from './types.js';

/**
 * The longest wait, in seconds, worth sleeping through inside one request:
 * the gateway's own bound (a minute window's longest wait). A longer one, a
 * spent daily or monthly quota, is for an app to schedule.
 */
export const MAX_CLIENT_WAIT_S = 60;

// The codes a later try can pass: a window or a slot frees up, a provider
// comes back, the first request under an Idempotency-Key finishes.
const TRANSIENT: ReadonlySet<string> = new Set([
  'RATE_LIMITED', 'CONCURRENT_LIMIT', 'QUOTA_EXCEEDED', 'AI_RATE_LIMITED', 'AI_UNAVAILABLE',
  'UNAVAILABLE', 'REQUEST_TIMEOUT', 'CONFLICT',
]);

// A status's code when a body carries none (a proxy's page, an empty body).
const BY_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_REQUEST', 401: 'UNAUTHORIZED', 403: 'FORBIDDEN', 404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT', 409: 'CONFLICT', 413: 'PAYLOAD_TOO_LARGE', 422: 'VALIDATION_ERROR', 429: 'RATE_LIMITED',
  503: 'UNAVAILABLE',
};

export interface VoxgateErrorInit {
  code: ErrorCode;
  message: string;
  status: number;
  retry_after_s?: number;
  resets_at?: string;
  request_id?: string;
  /** The server's X-Should-Retry, when it sent one. */
  should_retry?: boolean;
  /** Every field of the error object, e.g. `limit` or `session_id`. */
  fields?: Record<string, unknown>;
}

/**
 * Every failure the gateway reports: DESIGN §5's JSON error before a stream,
 * or a chat stream's `error` event (status 200 then: the stream had begun).
 */
export class VoxgateError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retry_after_s?: number;
  readonly resets_at?: string;
  readonly request_id?: string;
  readonly fields: Record<string, unknown>;
  private readonly header?: boolean;

  constructor(init: VoxgateErrorInit) {
    super(init.message);
    this.name = 'VoxgateError';
    this.code = init.code;
    this.status = init.status;
    this.retry_after_s = init.retry_after_s;
    this.resets_at = init.resets_at;
    this.request_id = init.request_id;
    this.fields = init.fields ?? {};
    this.header = init.should_retry;
  }

  /**
   * Whether trying the same request again soon can succeed: the server's
   * X-Should-Retry when it sent one; otherwise a transient code whose wait
   * is at most MAX_CLIENT_WAIT_S. The package never retries by itself.
   */
  get shouldRetry(): boolean {
    if (this.header !== undefined) return this.header;
    return TRANSIENT.has(this.code) && (this.retry_after_s ?? 1) <= MAX_CLIENT_WAIT_S;
  }

  /**
   * How long to wait before the same request can succeed, in milliseconds:
   * retry_after_s, or failing that the time to resets_at. Undefined when
   * waiting does not help (bad input, a missing tool) or nothing says how
   * long. A long wait here with shouldRetry false is one to schedule.
   */
  retryAfterMs(now: number = Date.now()): number | undefined {
    if (!TRANSIENT.has(this.code)) return undefined;
    if (this.retry_after_s !== undefined) return this.retry_after_s * 1000;
    if (this.resets_at) {
      const at = Date.parse(this.resets_at);
      if (!Number.isNaN(at)) return Math.max(0, at - now);
    }
    return undefined;
  }
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The error an `{error: {...}}` object (or a stream's error event) describes. */
export function errorFromBody(status: number, obj: unknown, headers?: Headers): VoxgateError {
  const e = (obj && typeof obj === 'object' && 'error' in obj ? (obj as { error: unknown }).error : obj) as
    Record<string, unknown> | null | undefined;
  const fields = e && typeof e === 'object' ? e : {};
  const sr = headers?.get('x-should-retry');
  const ra = num(fields.retry_after_s) ?? num(Number(headers?.get('retry-after') ?? NaN));
  return new VoxgateError({
    code: (str(fields.code) as ErrorCode | undefined) ?? BY_STATUS[status] ?? 'INTERNAL',
    message: str(fields.message) ?? 'Something went wrong; please try again.',
    status,
    retry_after_s: ra,
    resets_at: str(fields.resets_at),
    request_id: str(fields.request_id) ?? headers?.get('x-request-id') ?? undefined,
    should_retry: sr === 'true' ? true : sr === 'false' ? false : undefined,
    fields,
  });
}

/** The error a failed response carries, whatever its body is. */
export async function errorFromResponse(resp: Response): Promise<VoxgateError> {
  let obj: unknown;
  try {
    obj = JSON.parse(await resp.text());
  } catch {
    obj = undefined;
  }
  return errorFromBody(resp.status, obj, resp.headers);
}
