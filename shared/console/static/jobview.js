// jobview.js: the job view shared by the web console and the MCP App
// (ui://mcpbatch/job). Pure DOM building from a get_job result (JobView) and,
// optionally, failed records counted by error code; no network, no innerHTML
// with data. Actions are callbacks the caller wires (console: its own MCP
// calls; App: calls through the host).
(function (g) {
  'use strict';
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v; else if (k === 'style') e.style.cssText = v; /* CSSOM: allowed under the strict CSP, a style attribute is not */ else if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const k of kids.flat()) if (k !== undefined && k !== null && k !== false) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  const num = n => (Number(n) || 0).toLocaleString('en-US');
  const usd = n => '$' + (Number(n) || 0).toFixed(4);
  const done = j => (j.succeeded || 0) + (j.failed || 0);
  const pct = j => j.record_count > 0 ? Math.min(100, Math.round(100 * done(j) / j.record_count)) : (j.terminal ? 100 : 0);

  // progress is a labelled bar: the succeeded and failed shares of all records.
  function progress(j) {
    const total = Math.max(j.record_count || 0, 1);
    const ok = 100 * (j.succeeded || 0) / total, bad = 100 * (j.failed || 0) / total;
    return el('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': pct(j),
      'aria-label': `${done(j)} of ${j.record_count} records done` },
      el('span', { class: 'ok', style: `width:${ok.toFixed(2)}%` }), el('span', { class: 'bad', style: `width:${bad.toFixed(2)}%` }));
  }

  function stat(label, value) { return el('div', { class: 'stat' }, el('dt', {}, label), el('dd', {}, value)); }

  // jobCard renders one job. failures: {code: count} or null; actions:
  // {retry(job), exportLink(job, format)} (either may be absent).
  function jobCard(j, failures, actions) {
    actions = actions || {};
    const card = el('section', { class: 'job', 'data-status': j.status, 'data-job': j.job_id },
      el('header', {}, el('h2', {}, j.name || j.job_id), el('span', { class: 'badge ' + j.status }, j.status.replace(/_/g, ' '))),
      el('p', { class: 'meta' }, `${j.model} · ${j.provider}${j.mode ? ' · ' + j.mode.replace('_', '-') : ''} · ${j.job_id}`),
      progress(j),
      el('p', { class: 'counts' }, `${num(done(j))} / ${num(j.record_count)} records · ${num(j.succeeded)} succeeded · ${num(j.failed)} failed (${pct(j)}%)`),
      el('dl', { class: 'stats' }, stat('input tokens', num(j.input_tokens)), stat('output tokens', num(j.output_tokens)),
        stat('cost', usd(j.cost_usd)), stat('updated', (j.updated_at || '').replace('T', ' ').replace(/\..*|Z$/, ''))));
    if (j.error) card.append(el('p', { class: 'error' }, j.error));
    for (const w of j.warnings || []) card.append(el('p', { class: 'warning' }, w));
    if (failures && Object.keys(failures).length) {
      const rows = Object.entries(failures).sort((a, b) => b[1] - a[1]);
      const max = rows[0][1];
      card.append(el('h3', {}, 'Failures by error code'), el('table', { class: 'failures' },
        el('tbody', {}, rows.map(([code, n]) => el('tr', {}, el('th', { scope: 'row' }, code),
          el('td', { class: 'bar' }, el('span', { style: `width:${(100 * n / max).toFixed(1)}%` })), el('td', { class: 'n' }, num(n)))))));
    }
    const bar = el('div', { class: 'actions' });
    if (actions.retry && j.terminal && j.failed > 0)
      bar.append(el('button', { type: 'button', class: 'retry', onclick: () => actions.retry(j) }, `Retry ${num(j.failed)} failed`));
    if (actions.exportLink && (j.terminal || done(j) > 0))
      for (const f of ['jsonl', 'csv'])
        bar.append(el('a', { href: '#', class: 'export', 'data-format': f, onclick: ev => { ev.preventDefault(); actions.exportLink(j, f); } }, `Export ${f.toUpperCase()}`));
    if (j.retried_by && j.retried_by.length) bar.append(el('span', { class: 'meta' }, 'retried by ' + j.retried_by.join(', ')));
    if (bar.childNodes.length) card.append(bar);
    return card;
  }

  // jobList renders list_jobs' jobs as compact rows with a progress bar each.
  function jobList(jobs, onOpen) {
    if (!jobs.length) return el('p', { class: 'meta' }, 'No jobs yet.');
    return el('ul', { class: 'jobs' }, jobs.map(j => el('li', { 'data-job': j.job_id },
      el('a', { href: '#', onclick: ev => { ev.preventDefault(); onOpen && onOpen(j); } }, j.name || j.job_id),
      el('span', { class: 'badge ' + j.status }, j.status.replace(/_/g, ' ')), progress(j),
      el('span', { class: 'meta' }, `${num(done(j))}/${num(j.record_count)} · ${usd(j.cost_usd)}`))));
  }

  // countFailures folds get_job_results records into {error_code: count}.
  function countFailures(records) {
    const out = {};
    for (const r of records || []) { const c = r.error_code || 'unknown'; out[c] = (out[c] || 0) + 1; }
    return out;
  }

  g.McpbatchView = { el, jobCard, jobList, countFailures, progress };
})(globalThis);
