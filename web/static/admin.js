// /admin: the cost ledger for finance. One request per panel; every figure
// is the API's own text, money formatted from integer micro-USD.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const PAGE = 50;
  let cursors = [''], pageNo = 0, query = null;

  // offset is the zone's UTC offset in minutes at instant t (ms).
  function offset(zone, t) {
    const p = {};
    for (const x of new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23',
      year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(t))) p[x.type] = +x.value;
    return (Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(t / 1000) * 1000) / 60000;
  }
  // midnight is the instant the date (YYYY-MM-DD, plus days) starts in zone.
  function midnight(date, zone, days) {
    const [y, m, d] = date.split('-').map(Number);
    const wall = Date.UTC(y, m - 1, d + days);
    let t = wall - offset(zone, wall) * 60000;
    t = wall - offset(zone, t) * 60000; // across a DST change, once more
    return new Date(t).toISOString();
  }

  // params reads the filter form into the API's query (without paging).
  function params() {
    const zone = $('f-tz').value.trim() || 'UTC';
    try { offset(zone, Date.now()); } catch (_) { throw new Error('Unknown time zone: ' + zone); }
    const q = new URLSearchParams();
    q.set('from', midnight($('f-from').value, zone, 0));
    q.set('to', midnight($('f-to').value, zone, 1));
    for (const [id, name] of [['f-user', 'user_id'], ['f-kind', 'kind'], ['f-mode', 'mode'], ['f-model', 'model']]) {
      const v = $(id).value.trim();
      if (v) q.set(name, v);
    }
    return q;
  }

  function cell(tr, text, cls) { tr.appendChild(vg.el('td', text, cls)); }

  async function panel(stateEl, loadingText, fn) {
    vg.state(stateEl, loadingText, 'loading');
    try { await fn(); } catch (e) { vg.state(stateEl, e.message, 'error'); }
  }

  // money is a group's cost cell: a group of unpriced records only is
  // "unpriced", never $0.
  function money(tr, g) {
    const none = g.records !== '0' && g.records === g.unpriced;
    const td = vg.el('td', none ? 'unpriced' : vg.usd(g.cost_micros), none ? 'n unpriced' : 'n');
    tr.appendChild(td);
    return td;
  }

  async function summary(group) {
    const tbl = $('sum-' + group), st = $('sum-' + group + '-state');
    tbl.replaceChildren();
    await panel(st, 'Loading', async () => {
      const q = params(); q.set('group_by', group);
      const s = vg.parse(await (await vg.call('GET', '/v1/admin/costs/summary?' + q)).text());
      const head = tbl.createTHead().insertRow();
      for (const h of [group, 'records', 'unpriced', 'cost']) head.appendChild(vg.el('th', h, h === group ? '' : 'n'));
      const body = tbl.createTBody();
      for (const g of s.groups) {
        const tr = body.insertRow();
        cell(tr, g.key); cell(tr, g.records, 'n'); cell(tr, g.unpriced, 'n'); money(tr, g);
      }
      const tr = body.insertRow(); tr.className = 'total';
      cell(tr, 'total'); cell(tr, s.total.records, 'n'); cell(tr, s.total.unpriced, 'n');
      money(tr, s.total).id = 'total-' + group;
      vg.state(st, s.groups.length ? '' : 'No records in this range.');
    });
  }

  async function chart() {
    const box = $('chart');
    box.replaceChildren();
    await panel($('chart-state'), 'Drawing', async () => {
      const text = await (await vg.call('GET', '/v1/admin/costs/chart.svg?' + params())).text();
      // The server drew it; parsing as SVG (not HTML) adds no script.
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      box.appendChild(document.importNode(doc.documentElement, true));
      vg.state($('chart-state'), '');
    });
  }

  const TOKENS = ['text_in', 'text_cached_in', 'text_cache_write_in', 'text_out', 'audio_in', 'audio_cached_in', 'audio_out', 'image_in', 'image_cached_in'];

  async function records() {
    const body = $('records').tBodies[0];
    body.replaceChildren();
    $('next').disabled = true;
    await panel($('records-state'), 'Loading records', async () => {
      const q = params(); q.set('limit', PAGE);
      if (cursors[pageNo]) q.set('cursor', cursors[pageNo]);
      const list = vg.parse(await (await vg.call('GET', '/v1/admin/sessions?' + q)).text());
      for (const r of list.items) {
        const tr = body.insertRow();
        tr.dataset.id = r.id;
        cell(tr, r.created_at); cell(tr, r.session_id); cell(tr, r.user_id); cell(tr, r.kind); cell(tr, r.mode || '—');
        cell(tr, r.model); cell(tr, (Number(r.duration_ms) / 1000).toFixed(3) + ' s', 'n');
        for (const k of TOKENS) cell(tr, r.tokens[k], 'n');
        cell(tr, vg.usd(r.cost_micros), r.cost_micros === null ? 'n unpriced' : 'n');
        cell(tr, r.usage_source); cell(tr, r.price_version); cell(tr, r.overrun_s + ' s', 'n');
        tr.addEventListener('click', () => detail(tr, r));
      }
      if (list.next_cursor) { cursors[pageNo + 1] = list.next_cursor; $('next').disabled = false; }
      $('page-no').textContent = 'page ' + (pageNo + 1);
      vg.state($('records-state'), list.items.length ? '' : 'No records match these filters.');
    });
  }

  // detail shows the record the row came from; its fields are already on
  // the page, so it costs no request.
  function detail(tr, r) {
    for (const x of $('records').querySelectorAll('tr.sel')) x.classList.remove('sel');
    tr.classList.add('sel');
    const dl = $('detail');
    dl.replaceChildren();
    const add = (k, v) => { dl.appendChild(vg.el('dt', k)); dl.appendChild(vg.el('dd', v)); };
    add('record', r.id); add('session', r.session_id); add('user', r.user_id); add('kind', r.kind);
    add('provider', r.provider); add('model', r.model);
    if (r.transcription_model) add('transcription model', r.transcription_model);
    for (const [k, v] of Object.entries(r.tokens)) add(k.replaceAll('_', ' '), v);
    add('duration', r.duration_ms + ' ms'); add('overrun', r.overrun_s + ' s');
    add('cost', vg.usd(r.cost_micros)); add('usage source', r.usage_source); add('price version', r.price_version);
    vg.state($('detail-state'), '');
  }

  async function exportCSV() {
    await panel($('export-state'), 'Exporting', async () => {
      const blob = await (await vg.call('GET', '/v1/admin/costs.csv?' + params(), undefined, 'text/csv')).blob();
      const a = vg.el('a'); a.href = URL.createObjectURL(blob); a.download = 'voxgate-costs.csv';
      document.body.appendChild(a); a.click(); a.remove();
      vg.state($('export-state'), 'CSV ready (' + blob.size + ' bytes).');
    });
  }

  function refresh() {
    try { params(); } catch (e) { vg.state($('filter-state'), e.message, 'error'); return; }
    vg.state($('filter-state'), '');
    if (!vg.token()) { vg.state($('filter-state'), 'Paste a token with the finance or admin role to begin.'); return; }
    cursors = ['']; pageNo = 0;
    $('detail').replaceChildren(); vg.state($('detail-state'), 'Pick a record to see its detail.');
    chart(); summary('day'); summary('user'); summary('model'); records();
  }

  document.addEventListener('DOMContentLoaded', () => {
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 30 * 864e5).toISOString().slice(0, 10);
    $('f-from').value = from; $('f-to').value = today;
    try { $('f-tz').value = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch (_) { /* UTC */ }
    const u = new URLSearchParams(location.search); // filters may come in the page's URL
    for (const [id, name] of [['f-from', 'from'], ['f-to', 'to'], ['f-tz', 'tz'], ['f-user', 'user_id'], ['f-kind', 'kind'], ['f-mode', 'mode'], ['f-model', 'model']])
      if (u.has(name)) $(id).value = u.get(name);
    $('filters').addEventListener('submit', (ev) => { ev.preventDefault(); refresh(); });
    $('next').addEventListener('click', () => { pageNo++; records(); });
    $('first').addEventListener('click', () => { pageNo = 0; records(); });
    $('csv').addEventListener('click', exportCSV);
    document.addEventListener('vg:token', refresh);
    refresh();
  });
})();
