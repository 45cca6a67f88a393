// A server-sent events parser after the WHATWG rules: LF, CR and CRLF line
// ends (a CR at a chunk's end waits to see whether an LF follows), several
// data lines joined by LF, comments (`: ping`) ignored, a field with no
// colon taken as a name with an empty value, one BOM at the start dropped.
// Chunks may break anywhere, even inside a line end or a UTF-8 sequence
// (readSSE decodes with a streaming TextDecoder).

export interface SSEMessage { event: string; data: string; id?: string }

export class SSEParser {
  private buf = '';
  private skipLF = false;
  private started = false;
  private event = '';
  private data: string[] = [];
  private id: string | undefined;

  /** Feeds text; returns the messages it completed. */
  push(text: string): SSEMessage[] {
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.skipLF && text.length > 0) {
      this.skipLF = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    this.buf += text;
    const out: SSEMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(this.buf.slice(start, i), out);
      if (c === '\r') {
        if (i + 1 === this.buf.length) this.skipLF = true;
        else if (this.buf[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  /** Ends the stream: a message without its blank line is dropped, as the rules say. */
  end(): SSEMessage[] {
    this.buf = '';
    this.data = [];
    this.event = '';
    return [];
  }

  private line(line: string, out: SSEMessage[]): void {
    if (line === '') {
      if (this.data.length > 0) {
        const m: SSEMessage = { event: this.event || 'message', data: this.data.join('\n') };
        if (this.id !== undefined) m.id = this.id;
        out.push(m);
      }
      this.data = [];
      this.event = '';
      return;
    }
    if (line[0] === ':') return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    switch (field) {
      case 'event': this.event = value; break;
      case 'data': this.data.push(value); break;
      case 'id': if (!value.includes('\0')) this.id = value; break;
    }
  }
}

/** Reads a response body as server-sent events. */
export async function* readSSE(body: ReadableStream<Uint8Array>): AsyncGenerator<SSEMessage> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  const p = new SSEParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* p.push(dec.decode(value, { stream: true }));
    }
    yield* p.push(dec.decode());
  } finally {
    // An abandoned loop (break, throw, abort) frees the connection.
    reader.cancel().catch(() => {});
  }
}
