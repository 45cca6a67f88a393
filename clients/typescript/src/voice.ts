import type { Transport } from './client.js';
import type { VoiceMode } from './types.js';

/**
 * What a call needs of WebRTC: the part of RTCPeerConnection both browsers
 * and react-native-webrtc have, so either is passed unchanged.
 */
export interface PeerConnectionLike {
  addTrack(track: any, ...streams: any[]): any;
  createDataChannel(label: string): any;
  createOffer(): Promise<{ type?: string; sdp?: string }>;
  setLocalDescription(d: any): Promise<void>;
  setRemoteDescription(d: any): Promise<void>;
  readonly localDescription: { sdp?: string } | null;
  close(): void;
  ontrack: ((e: any) => void) | null;
}

export interface VoiceOptions {
  /** Defaults to globalThis.RTCPeerConnection. */
  RTCPeerConnection?: new (config?: any) => PeerConnectionLike;
  /** Used for the direct mode's offer to the provider. */
  fetch?: typeof fetch;
}

export interface VoiceStartOptions {
  mode?: VoiceMode;
  /** The microphone, e.g. getUserMedia({audio: {echoCancellation: true}}). */
  stream?: { getTracks(): any[] };
  signal?: AbortSignal;
}

export interface VoiceEvents {
  /**
   * A line of the transcript, as it is said: while a line grows it comes
   * with partial: true and the line so far, then once without it, whole.
   * A realtime call's line is whole when the provider says so (its
   * transcript's done or completed event, whose text replaces the deltas'
   * sum); a live call's when the other speaker starts or the call ends.
   */
  transcript: { role: 'user' | 'assistant'; text: string; partial?: boolean };
  tool: { call_id: string; name: string; arguments: string; output?: string; result?: unknown; error?: unknown };
  card: { kind: string; data: unknown };
  quota: { seconds_remaining: number };
  track: { track: any; streams: any[] };
  event: any;
  ended: { session: any; cost: any };
}

type Listener<K extends keyof VoiceEvents> = (e: VoiceEvents[K]) => void;
type Role = 'user' | 'assistant';

// sum adds a usage object into acc, field by field: a direct call reports
// the usage it saw, summed over its responses, at its end.
function sum(acc: any, u: any): any {
  for (const [k, v] of Object.entries(u || {})) {
    if (typeof v === 'number') acc[k] = (acc[k] || 0) + v;
    else if (v && typeof v === 'object') sum((acc[k] = acc[k] || {}), v);
    else if (k === 'type') acc[k] = v;
  }
  return acc;
}

const enc = encodeURIComponent;

// path makes an sdp_url the gateway gave, absolute or not, a path for the Transport.
function path(u: string): string {
  return /^https?:/.test(u) ? ((x) => x.pathname + x.search)(new URL(u)) : u;
}

/** One call: its events, mute and end. */
export class VoiceCall {
  session: any;
  /** The call's seconds left at its start: the lesser of the quota's and the session's cap. */
  secondsRemaining = 0;
  readonly direct: boolean;
  private ls: { [K in keyof VoiceEvents]?: Listener<K>[] } = {};
  private usage: any = {};
  private heard: any = {};
  private done?: Promise<any>;
  // lines are each speaker's transcript line being said.
  private lines: Partial<Record<Role, string>> = {};
  dc: any;

  constructor(private readonly t: Transport, readonly pc: PeerConnectionLike, private readonly mic: { getTracks(): any[] } | undefined, direct: boolean) {
    this.direct = direct;
  }

  get id(): string {
    return this.session?.session_id ?? '';
  }

  /** Listens for an event; returns the function that stops listening. */
  on<K extends keyof VoiceEvents>(type: K, fn: Listener<K>): () => void {
    const a: Listener<K>[] = ((this.ls as any)[type] ??= []);
    a.push(fn);
    return () => a.splice(a.indexOf(fn) >>> 0, 1);
  }

  emit<K extends keyof VoiceEvents>(type: K, e: VoiceEvents[K]): void {
    for (const fn of (this.ls[type] as Listener<K>[] | undefined) ?? []) fn(e);
  }

  /** Mutes or unmutes the microphone; the call stays up. */
  mute(on = true): void {
    for (const t of this.mic?.getTracks() ?? []) t.enabled = !on;
    // Live also tells the voice model, so it does not take the silence as a pause to answer.
    if (this.session?.mode === 'live' && this.dc?.readyState === 'open') this.dc.send(JSON.stringify({ type: on ? 'session.input_audio.mute' : 'session.input_audio.unmute' }));
  }

  // said adds a transcript delta to role's line under way. In live mode a
  // speaker's turn also ends the other's line: its deltas carry no end of
  // their own.
  private said(role: Role, delta: string, endsOther: boolean): void {
    if (endsOther) this.flush(role === 'user' ? 'assistant' : 'user');
    const text = ((this.lines[role] ?? '') + (delta ?? '')).trimStart();
    this.lines[role] = text;
    if (text) this.emit('transcript', { role, text, partial: true });
  }

  // whole ends role's line with the provider's own text for it.
  private whole(role: Role, text: string): void {
    delete this.lines[role];
    this.emit('transcript', { role, text });
  }

  // flush ends role's line (both, without one) as it stands.
  private flush(role?: Role): void {
    for (const r of role ? [role] : (['user', 'assistant'] as const)) {
      const text = this.lines[r];
      delete this.lines[r];
      if (text) this.emit('transcript', { role: r, text });
    }
  }

  /** Handles one oai-events message (a data channel's MessageEvent.data). */
  handle(data: string): void {
    let m: any;
    try {
      m = JSON.parse(data);
    } catch {
      return;
    }
    this.emit('event', m);
    switch (m.type) {
      case 'conversation.item.input_audio_transcription.delta':
        this.said('user', m.delta, false);
        break;
      case 'conversation.item.input_audio_transcription.completed':
        this.whole('user', m.transcript);
        if (this.direct) sum(this.heard, m.usage);
        break;
      case 'response.output_audio_transcript.delta':
      case 'response.audio_transcript.delta':
        this.said('assistant', m.delta, false);
        break;
      case 'response.output_audio_transcript.done':
      case 'response.audio_transcript.done':
        this.whole('assistant', m.transcript);
        break;
      case 'session.input_transcript.delta':
        this.said('user', m.delta, true);
        break;
      case 'session.output_transcript.delta':
        this.said('assistant', m.delta, true);
        break;
      case 'session.closed':
        this.flush();
        break;
      case 'response.done': {
        const calls = (m.response?.output ?? []).filter((o: any) => o.type === 'function_call');
        if (this.direct) {
          sum(this.usage, m.response?.usage);
          if (calls.length) void this.runTools(calls);
        } else for (const c of calls) this.emit('tool', { call_id: c.call_id, name: c.name, arguments: c.arguments });
        break;
      }
    }
  }

  // runTools runs a direct call's function calls on the gateway once the
  // response that made them is done, gives the model every output, then asks
  // for one new response: one per call would ask while another is active.
  private async runTools(calls: any[]): Promise<void> {
    for (const c of calls) {
      try {
        const r: any = await this.t.json('POST', '/v1/voice/sessions/' + enc(this.id) + '/tool-calls', {
          body: { call_id: c.call_id, name: c.name, arguments: c.arguments },
        });
        this.emit('tool', { call_id: c.call_id, name: c.name, arguments: c.arguments, output: r.output, result: r.result, error: r.error });
        for (const card of r.result?.cards ?? []) this.emit('card', card);
        this.dc.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: c.call_id, output: r.output } }));
      } catch (error) {
        this.emit('tool', { call_id: c.call_id, name: c.name, arguments: c.arguments, error });
      }
    }
    this.dc.send(JSON.stringify({ type: 'response.create' }));
  }

  /** Ends the call once; resolves to the ended session with its cost record. */
  end(reason = 'user_hangup'): Promise<any> {
    return (this.done ??= (async () => {
      this.pc.close();
      this.flush();
      for (const t of this.mic?.getTracks() ?? []) t.stop?.();
      if (!this.id) return undefined;
      let usage: any;
      if (this.direct && Object.keys(this.usage).length) {
        usage = Object.keys(this.heard).length ? { ...this.usage, transcription: this.heard } : this.usage;
      }
      const s: any = await this.t.json('POST', '/v1/voice/sessions/' + enc(this.id) + '/end', { body: { reason, usage } });
      this.emit('ended', { session: s, cost: s?.cost });
      return s;
    })());
  }
}

/** POST /v1/voice/sessions and the WebRTC call it describes. */
export class Voice {
  constructor(private readonly t: Transport, private readonly o: VoiceOptions = {}) {}

  /** Starts a session, places its call and resolves once the answer is set. */
  async start(so: VoiceStartOptions = {}): Promise<VoiceCall> {
    const PC = this.o.RTCPeerConnection ?? (globalThis as any).RTCPeerConnection;
    if (!PC) throw new Error('voice needs an RTCPeerConnection (pass one as voice.RTCPeerConnection)');
    // The session first: a relayed one names the TURN servers the peer
    // connection must have before it gathers candidates for its offer.
    const s: any = await this.t.json('POST', '/v1/voice/sessions', { body: { mode: so.mode ?? 'sideband' }, signal: so.signal });
    const direct = !s.sdp_url && !!s.realtime_url && !!s.client_secret;
    let pc: PeerConnectionLike;
    try {
      pc = new PC(s.ice_servers?.length ? { iceServers: s.ice_servers } : undefined);
    } catch (e) {
      await this.t.json('POST', '/v1/voice/sessions/' + enc(s.session_id) + '/end', { body: { reason: 'error' } }).catch(() => {});
      throw e;
    }
    const call = new VoiceCall(this.t, pc, so.stream, direct);
    call.session = s;
    const pending: any[] = [];
    let ready = false;
    try {
      for (const tr of so.stream?.getTracks() ?? []) pc.addTrack(tr, so.stream);
      const dc = (call.dc = pc.createDataChannel('oai-events'));
      // Events that come before the app's listeners are on wait for them.
      dc.onmessage = (e: any) => (!pending.length && ready ? call.handle(e.data) : pending.push(e.data));
      // The remote track comes while the answer is set, before start
      // returns: it waits for the app's listeners as early events do.
      const early: any[] = [];
      pc.ontrack = (e: any) => {
        const t = { track: e.track, streams: e.streams ?? [] };
        if (ready) call.emit('track', t);
        else early.push(t);
      };
      await pc.setLocalDescription(await pc.createOffer());
      const offer = pc.localDescription?.sdp ?? '';
      let answer: string;
      if (s.sdp_url) {
        const r = await this.t.request('POST', path(s.sdp_url), { body: offer, contentType: 'application/sdp', accept: 'application/sdp', signal: so.signal });
        answer = await r.text();
      } else if (direct) {
        // The offer goes to the provider with the session's short-lived secret, never the user's token.
        const f = this.o.fetch ?? fetch;
        const r = await f(s.realtime_url, { method: 'POST', body: offer, signal: so.signal, headers: { Authorization: 'Bearer ' + s.client_secret.value, 'Content-Type': 'application/sdp' } });
        if (!r.ok) throw new Error('the provider refused the call (' + r.status + ')');
        answer = await r.text();
      } else throw new Error('the session came back in mode ' + s.mode + ' with nowhere to send the call');
      await pc.setRemoteDescription({ type: 'answer', sdp: answer });
      const left = s.quota?.seconds_remaining;
      call.secondsRemaining = left == null ? s.max_duration_s : Math.min(left, s.max_duration_s);
      // After the app's listeners are on: the quota, then the events that came early.
      setTimeout(() => {
        call.emit('quota', { seconds_remaining: call.secondsRemaining });
        for (const t of early.splice(0)) call.emit('track', t);
        for (const d of pending.splice(0)) call.handle(d);
        ready = true;
      }, 0);
      return call;
    } catch (e) {
      await call.end('error').catch(() => {});
      throw e;
    }
  }
}
