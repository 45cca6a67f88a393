import { errorFromResponse } from './errors.js';
import { Chat } from './chat.js';
import { Voice, type VoiceOptions } from './voice.js';

/**
 * Returns the bearer token (a Supabase session's access token, any JWT).
 * It is called before each request; after a 401 it is called once more with
 * `refresh: true`, and the request is sent again with what it returns.
 */
export type TokenProvider = (opts: { refresh: boolean }) => string | Promise<string>;

export interface ClientOptions {
  /** The gateway's origin, e.g. https://voice.example.com. */
  baseUrl: string;
  token: TokenProvider;
  /** A fetch to use instead of the platform's (tests, React Native polyfills). */
  fetch?: typeof fetch;
  /** Voice's WebRTC: a constructor, e.g. react-native-webrtc's RTCPeerConnection. */
  voice?: VoiceOptions;
}

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  accept?: string;
  /** Sends body as it is (a string) with this Content-Type, e.g. application/sdp. */
  contentType?: string;
}

/** The transport every API of the package shares: auth, JSON, §5 errors. */
export class Transport {
  private readonly base: string;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly opts: ClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, '');
    // Bound, so a platform fetch is not called with the wrong `this`.
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Sends a request; a non-2xx answer is thrown as a VoxgateError. */
  async request(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const body = o.body === undefined ? undefined : o.contentType ? String(o.body) : JSON.stringify(o.body);
    const send = async (refresh: boolean) => {
      const headers: Record<string, string> = { Accept: o.accept ?? 'application/json', ...o.headers };
      headers.Authorization = 'Bearer ' + (await this.opts.token({ refresh }));
      if (body !== undefined) headers['Content-Type'] = o.contentType ?? 'application/json';
      return this.fetchFn(this.base + path, { method, headers, body, signal: o.signal });
    };
    let resp = await send(false);
    if (resp.status === 401) {
      // Drain the refused answer so its connection can be reused.
      await resp.arrayBuffer().catch(() => {});
      resp = await send(true);
    }
    if (!resp.ok) throw await errorFromResponse(resp);
    return resp;
  }

  async json<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const resp = await this.request(method, path, o);
    if (resp.status === 204) return undefined as T;
    return (await resp.json()) as T;
  }
}

/** The gateway's API for an app's user. */
export class VoxgateClient {
  readonly chat: Chat;
  readonly voice: Voice;

  constructor(opts: ClientOptions) {
    const t = new Transport(opts);
    this.chat = new Chat(t);
    this.voice = new Voice(t, { fetch: opts.fetch, ...opts.voice });
  }
}

export function createClient(opts: ClientOptions): VoxgateClient {
  return new VoxgateClient(opts);
}
