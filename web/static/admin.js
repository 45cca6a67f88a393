// /admin: the cost ledger for finance. One request per panel; every figure
// is the API's own text, money formatted from integer micro-USD.
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const PAGE = 50;
  let cursors = [''], pageNo = 0, query = null;

  // nextDay is the date after date (YYYY-MM-DD), for the range's
  // exclusive end: the API cuts days in the zone itself.
  function nextDay(date) {
    const [y, m, d] = date.split('-').map(Number);
    return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
  }

  // params reads the filter form into the API's query (without paging).
  function params() {
    const zone = $('f-tz').value.trim() || 'UTC';
    try { new Intl.DateTimeFormat('en', { timeZone: zone }); } catch (_) { throw new Error('Unknown time zone: ' + zone); }
    if (!$('f-from').value || !$('f-to').value) throw new Error('Pick the first and last day.');
    const q = new URLSearchParams();
    q.set('from', $('f-from').value);
    q.set('to', nextDay($('f-to').value));
    q.set('tz', zone);
    for (const [id, name] of [['f-user', 'user_id'], ['f-kind', 'kind'], ['f-mode', 'mode'], ['f-model', 'model']]) {
      const v = $(id).value.trim();
      if (v) q.set(name, v);
    }
    return q;
  }

  function cell(tr, text, cls) { tr.appendChild(vg.el('td', text, cls)); }

  // fresh notes how current a finance answer is (as_of, lag_ms,
  // read_from): the line shows the oldest of this refresh's answers, so it
  // holds for every panel on screen. A standby's lag is shown beside it.
  let oldest = null;
  function fresh(x) {
    if (!x || !x.as_of) return;
    const at = Date.parse(x.as_of);
    if (oldest && oldest.at <= at) return;
    oldest = { at, lag: Number(x.lag_ms), from: x.read_from };
    const p = $('freshness');
    p.dataset.asOf = x.as_of; p.dataset.lagMs = oldest.lag; p.dataset.readFrom = oldest.from;
    const when = new Date(at).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
    const behind = oldest.from === 'standby'
      ? 'read from the standby, ' + (oldest.lag / 1000).toFixed(1) + ' s behind the primary (replication lag)'
      : 'read from the primary';
    p.textContent = 'Data as of ' + when + ': ' + behind + '.';
    p.className = oldest.lag > 60000 ? 'state error' : 'muted';
  }

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
      fresh(s);
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

  const TOKENS = ['text_in', 'text_cached_in', 'text_cache_write_in', 'text_cache_write_12h_in', 'text_out', 'audio_in', 'audio_cached_in', 'audio_out', 'image_in', 'image_cached_in'];

  async function records() {
    const body = $('records').tBodies[0];
    body.replaceChildren();
    $('next').disabled = true;
    await panel($('records-state'), 'Loading records', async () => {
      const q = params(); q.set('limit', PAGE);
      if (cursors[pageNo]) q.set('cursor', cursors[pageNo]);
      const list = vg.parse(await (await vg.call('GET', '/v1/admin/sessions?' + q)).text());
      fresh(list);
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

  // detail shows one record with its cost lines, which add up to its cost.
  async function detail(tr, r) {
    for (const x of $('records').querySelectorAll('tr.sel')) x.classList.remove('sel');
    tr.classList.add('sel');
    const dl = $('detail'), lines = $('lines');
    dl.replaceChildren(); lines.replaceChildren();
    await panel($('detail-state'), 'Loading the record', async () => {
      const d = vg.parse(await (await vg.call('GET', '/v1/admin/sessions/' + encodeURIComponent(r.id))).text());
      const add = (k, v) => { dl.appendChild(vg.el('dt', k)); dl.appendChild(vg.el('dd', v)); };
      add('record', d.id); add('when', d.created_at); add('session', d.session_id); add('user', d.user_id);
      add('kind', d.kind); add('mode', d.mode || '—'); add('provider', d.provider); add('model', d.model);
      if (d.transcription_model) add('transcription model', d.transcription_model);
      if (d.backend_model) add('backend model', d.backend_model);
      add('duration', d.duration_ms + ' ms'); add('overrun', d.overrun_s + ' s');
      add('usage source', d.usage_source); add('price version', d.price_version);
      add('cost', vg.usd(d.cost_micros));
      if (d.unpriced_reason) add('unpriced because', d.unpriced_reason);
      const head = lines.createTHead().insertRow();
      for (const h of ['model', 'class', 'tokens', 'price', 'per', 'amount (µ$)']) head.appendChild(vg.el('th', h));
      const body = lines.createTBody();
      for (const l of d.lines || []) {
        const row = body.insertRow();
        cell(row, l.model); cell(row, l.class); cell(row, l.tokens, 'n'); cell(row, vg.usd(l.price_micros_per_unit), 'n');
        cell(row, l.unit); cell(row, l.amount_micros, 'n');
      }
      const rr = body.insertRow(); cell(rr, 'rounding'); cell(rr, ''); cell(rr, ''); cell(rr, ''); cell(rr, ''); cell(rr, d.rounding_micros, 'n');
      const tot = body.insertRow(); tot.className = 'total';
      cell(tot, 'total'); cell(tot, ''); cell(tot, ''); cell(tot, ''); cell(tot, '');
      const c = vg.el('td', d.lines_total_micros === undefined ? '' : vg.usd(d.lines_total_micros), 'n'); c.id = 'lines-total'; tot.appendChild(c);
      vg.state($('detail-state'), '');
    });
  }

  // exportFile saves the CSV or JSONL of the filters and shows its
  // manifest (rows and cost, read with the rows), beside the summary's.
  async function exportFile(ext, type) {
    await panel($('export-state'), 'Exporting', async () => {
      const r = await vg.call('GET', '/v1/admin/costs.' + ext + '?' + params(), undefined, type);
      const blob = await r.blob();
      const a = vg.el('a'); a.href = URL.createObjectURL(blob); a.download = 'voxgate-costs.' + ext;
      document.body.appendChild(a); a.click(); a.remove();
      const rows = r.headers.get('X-Voxgate-Rows'), cost = r.headers.get('X-Voxgate-Cost-Micros');
      fresh({ as_of: r.headers.get('X-Voxgate-As-Of'), lag_ms: r.headers.get('X-Voxgate-Lag-Ms'), read_from: r.headers.get('X-Voxgate-Read-From') });
      const total = $('total-day') ? $('total-day').textContent : '';
      const m = $('manifest');
      m.replaceChildren(vg.el('span', ext.toUpperCase() + ': ' + rows + ' rows, ' + vg.usd(cost) + ' priced, ' + blob.size + ' bytes'));
      m.dataset.rows = rows; m.dataset.cost = cost; m.dataset.size = blob.size; m.dataset.ext = ext;
      m.dataset.asOf = r.headers.get('X-Voxgate-As-Of') || ''; m.dataset.lagMs = r.headers.get('X-Voxgate-Lag-Ms') || '';
      if (total) m.appendChild(vg.el('span', vg.usd(cost) === total ? ' (matches the summary)' : ' (differs from the summary: ' + total + ')', vg.usd(cost) === total ? 'ok' : 'err'));
      vg.state($('export-state'), ext.toUpperCase() + ' ready.');
    });
  }

  // reconcile compares the provider's own usage and costs with the ledger
  // by day (in the page's zone) and model; a day past the threshold is red.
  async function reconcile() {
    const tbl = $('reconcile');
    tbl.replaceChildren();
    await panel($('reconcile-state'), 'Asking the provider', async () => {
      const p = params(), q = new URLSearchParams();
      for (const k of ['from', 'to']) q.set(k, p.get(k)); // the provider's days are UTC days
      q.set('threshold_micros', $('threshold').value || '0');
      const r = vg.parse(await (await vg.call('GET', '/v1/admin/costs/reconcile?' + q)).text());
      fresh(r);
      const head = tbl.createTHead().insertRow();
      for (const h of ['day', 'model', 'ledger tokens', 'provider tokens', 'difference', 'ledger cost', 'provider cost', 'difference', 'coverage'])
        head.appendChild(vg.el('th', h));
      const body = tbl.createTBody();
      for (const d of r.days) for (const x of d.models) {
        const tr = body.insertRow();
        if (x.red) tr.className = 'red';
        cell(tr, d.date); cell(tr, x.model); cell(tr, x.ledger_tokens, 'n'); cell(tr, x.provider_tokens, 'n'); cell(tr, x.token_diff, 'n');
        cell(tr, vg.usd(x.ledger_cost_micros), 'n'); cell(tr, vg.usd(x.provider_cost_micros), 'n'); cell(tr, vg.usd(x.cost_diff_micros), 'n'); cell(tr, x.coverage, 'n');
      }
      const red = Number(r.red_days);
      vg.state($('reconcile-state'), !r.days.length ? 'Nothing to compare in this range.' : red ? red + ' red day(s): the ledger and the provider differ by more than the threshold.' : 'Every day is within the threshold.', red ? 'error' : '');
    });
  }

  // reprice previews a price table over the filters' records: per model
  // the stored and the new totals and their difference. Nothing is written.
  async function reprice() {
    const tbl = $('reprice');
    tbl.replaceChildren();
    await panel($('reprice-state'), 'Re-pricing', async () => {
      const table = $('reprice-table').value;
      if (!table.trim()) throw new Error('Paste a price table or pick a file.');
      const r = vg.parse(await (await vg.call('POST', '/v1/admin/costs/reprice?' + params(), table, undefined, 'application/yaml')).text());
      const head = tbl.createTHead().insertRow();
      for (const h of ['model', 'records', 'old cost', 'new cost', 'difference', 'unpriced old → new']) head.appendChild(vg.el('th', h));
      const body = tbl.createTBody();
      const row = (x, cls) => {
        const tr = body.insertRow(); tr.className = cls;
        cell(tr, x.model); cell(tr, x.records, 'n'); cell(tr, vg.usd(x.old_cost_micros), 'n'); cell(tr, vg.usd(x.new_cost_micros), 'n');
        cell(tr, vg.usd(x.difference_micros), 'n'); cell(tr, x.old_unpriced + ' → ' + x.new_unpriced, 'n');
        return tr;
      };
      for (const x of r.models) row(x, '');
      row(r.total, 'total').id = 'reprice-total';
      vg.state($('reprice-state'), r.models.length ? 'Prices "' + r.new_version + '" over ' + r.total.records + ' records: ' + vg.usd(r.total.difference_micros) + ' difference. Nothing was written.' : 'No records in this range.');
    });
  }

  function refresh() {
    try { params(); } catch (e) { vg.state($('filter-state'), e.message, 'error'); return; }
    vg.state($('filter-state'), '');
    if (!vg.token()) { vg.state($('filter-state'), 'Paste a token with the finance or admin role to begin.'); return; }
    cursors = ['']; pageNo = 0; oldest = null; $('freshness').textContent = '';
    $('detail').replaceChildren(); $('lines').replaceChildren(); $('manifest').replaceChildren(); vg.state($('detail-state'), 'Pick a record to see its detail.');
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
    $('reconcile-form').addEventListener('submit', (ev) => { ev.preventDefault(); reconcile(); });
    $('reprice-form').addEventListener('submit', (ev) => { ev.preventDefault(); reprice(); });
    $('reprice-file').addEventListener('change', async () => { const f = $('reprice-file').files[0]; if (f) $('reprice-table').value = await f.text(); });
    $('csv').addEventListener('click', () => exportFile('csv', 'text/csv'));
    $('jsonl').addEventListener('click', () => exportFile('jsonl', 'application/jsonl'));
    document.addEventListener('vg:token', refresh);
    refresh();
  });
})();
