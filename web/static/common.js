// voxgate pages: the token, API calls and their error messages, shared by
// /admin and /demo. Values reach the page through textContent only.
'use strict';
const vg = (() => {
  const KEY = 'voxgate.token';
  const token = () => sessionStorage.getItem(KEY) || '';

  // subject is a token's sub claim, read for display only (the gateway,
  // not the page, verifies a token); '' when the token is not a JWT.
  function subject(tok) {
    try {
      const part = tok.split('.');
      if (part.length !== 3) return '';
      const b64 = part[1].replace(/-/g, '+').replace(/_/g, '/');
      const bin = atob(b64 + '='.repeat((4 - b64.length % 4) % 4));
      const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0))));
      return typeof claims.sub === 'string' && claims.sub ? claims.sub : '';
    } catch (_) { return ''; }
  }
  const who = (tok) => { const s = subject(tok); return '“' + (s.length > 64 ? s.slice(0, 64) + '…' : s) + '”'; };

  function tokenState(text, kind) {
    const st = document.getElementById('token-state');
    st.textContent = text;
    st.className = kind ? 'state ' + kind : 'muted';
  }
  function use(tok) {
    sessionStorage.setItem(KEY, tok);
    tokenState('token set');
    document.dispatchEvent(new Event('vg:token'));
  }

  // A token offered in the URL's fragment (voxgate dev prints such links)
  // is taken only when this tab holds none, or once the user agrees to
  // switch to the user it names: a link must never sign someone in as
  // another user unasked (login CSRF). The fragment leaves the address bar
  // first, whatever it holds; one that cannot be read is an error shown.
  function fromHash() {
    const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
    if (!m) return;
    history.replaceState(null, '', location.pathname + location.search);
    let offered = '';
    try { offered = decodeURIComponent(m[1]).trim(); } catch (_) { /* a malformed escape */ }
    if (!subject(offered)) {
      tokenState('The token in the link could not be read; paste a token instead.', 'error');
      return;
    }
    const held = token();
    if (offered === held) return;
    if (!held) { use(offered); return; }
    ask(offered, held);
  }

  // ask shows, under the token form, which user the link would switch
  // this tab to, with a button to switch and one to keep the token held.
  function ask(offered, held) {
    let bar = document.getElementById('token-switch');
    if (!bar) {
      bar = el('p', '', 'state token-switch');
      bar.id = 'token-switch';
      bar.setAttribute('role', 'alert');
      document.getElementById('token-form').after(bar);
    }
    const yes = el('button', 'Switch to ' + who(offered), 'switch'), no = el('button', 'Keep ' + (subject(held) ? who(held) : 'the token in use'), 'keep');
    yes.type = no.type = 'button';
    const done = () => { bar.hidden = true; bar.replaceChildren(); };
    yes.addEventListener('click', () => { done(); use(offered); });
    no.addEventListener('click', done);
    bar.replaceChildren(el('span', 'This link carries a token for user ' + who(offered) + (subject(held) ? '; this tab uses ' + who(held) + '. ' : '. ')), yes, ' ', no);
    bar.hidden = false;
  }

  // JSON numbers become their exact source text: sums of micro-dollars may
  // pass 2^53, and a float must never round a figure finance reads.
  const parse = (text) => JSON.parse(text, (k, v, ctx) =>
    typeof v === 'number' ? (ctx && ctx.source ? ctx.source : String(v)) : v);

  // usd formats integer micro-USD (decimal text) as exact dollars; null is
  // an unpriced record, never $0.
  function usd(micros) {
    if (micros === null || micros === undefined) return 'unpriced';
    let s = String(micros), neg = s.startsWith('-');
    if (neg) s = s.slice(1);
    s = s.padStart(7, '0');
    return (neg ? '-$' : '$') + s.slice(0, -6) + '.' + s.slice(-6);
  }

  class APIError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }

  // friendly turns a failed call into what the page says.
  function friendly(status, body) {
    const e = (body && body.error) || {};
    if (status === 401) return 'Your token has expired or is not valid. Paste a fresh one.';
    if (status === 403) return 'This token may not see this: the finance pages need a token with the admin or finance role.';
    if (status === 429) return (e.message || 'Too many requests.') + (e.retry_after_s ? ' Try again in ' + e.retry_after_s + ' s.' : '');
    if (status >= 500) return e.message || 'The gateway could not answer just now. Try again shortly.';
    return e.message || ('The request failed (' + status + ').');
  }

  // call makes one API request with the token; it throws APIError with the
  // message to show. A string body is sent as ctype (an SDP offer unless
  // said otherwise), anything else as JSON.
  async function call(method, path, body, accept, ctype) {
    const h = { Authorization: 'Bearer ' + token() };
    if (accept) h.Accept = accept;
    const init = { method, headers: h };
    if (body !== undefined) {
      if (typeof body === 'string') { init.body = body; h['Content-Type'] = ctype || 'application/sdp'; }
      else { init.body = JSON.stringify(body); h['Content-Type'] = 'application/json'; }
    }
    const r = await fetch(path, init);
    if (!r.ok) {
      let b = null;
      try { b = parse(await r.text()); } catch (_) { /* not JSON */ }
      throw new APIError(r.status, b && b.error ? b.error.code : '', friendly(r.status, b));
    }
    return r;
  }

  // state shows a panel's loading, empty or error line.
  function state(el, text, kind) {
    el.textContent = text || '';
    el.className = 'state' + (kind ? ' ' + kind : '');
  }

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // Before the pages' own handlers: they read the token this settles.
  document.addEventListener('DOMContentLoaded', () => {
    const f = document.getElementById('token-form'), inp = document.getElementById('token');
    tokenState(token() ? 'token set' : 'no token yet');
    f.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const bar = document.getElementById('token-switch');
      if (bar) { bar.hidden = true; bar.replaceChildren(); }
      use(inp.value.trim());
      inp.value = '';
    });
    fromHash();
    addEventListener('hashchange', fromHash);
  });

  return { token, parse, usd, call, state, el, friendly, APIError };
})();
