// voxgate pages: the token, API calls and their error messages, shared by
// /admin and /demo. Values reach the page through textContent only.
'use strict';
const vg = (() => {
  const KEY = 'voxgate.token';
  // A token offered in the URL's fragment (voxgate dev prints such links)
  // is kept for this tab and removed from the address bar.
  function fromHash() {
    const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (!m) return false;
    sessionStorage.setItem(KEY, decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search);
    return true;
  }
  fromHash();
  addEventListener('hashchange', () => { if (fromHash()) document.dispatchEvent(new Event('vg:token')); });
  const token = () => sessionStorage.getItem(KEY) || '';

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

  document.addEventListener('DOMContentLoaded', () => {
    const f = document.getElementById('token-form'), inp = document.getElementById('token');
    const st = document.getElementById('token-state');
    st.textContent = token() ? 'token set' : 'no token yet';
    f.addEventListener('submit', (ev) => {
      ev.preventDefault();
      sessionStorage.setItem(KEY, inp.value.trim());
      inp.value = '';
      st.textContent = 'token set';
      document.dispatchEvent(new Event('vg:token'));
    });
  });

  return { token, parse, usd, call, state, el, friendly, APIError };
})();
