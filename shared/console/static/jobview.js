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

  // barTable is a bar per [label, count] row, as long as its share of the
  // longest; each row carries its label and count (data-value, data-count).
  function barTable(cls, rows) {
    const max = Math.max(1, ...rows.map(r => r[1]));
    return el('table', { class: cls }, el('tbody', {}, rows.map(([label, n]) => el('tr', { 'data-value': label, 'data-count': n }, el('th', { scope: 'row' }, label),
      el('td', { class: 'bar' }, el('span', { style: `width:${(100 * n / max).toFixed(1)}%` })), el('td', { class: 'n' }, num(n))))));
  }

  // failureTable is a bar per error code, longest first.
  function failureTable(failures) {
    return barTable('failures', Object.entries(failures).sort((a, b) => b[1] - a[1]));
  }

  // summaryFailures is a summarize_results answer's failures as {code: count}.
  function summaryFailures(sum) {
    return Object.fromEntries(((sum && sum.failures) || []).map(c => [c.value, c.count]));
  }

  // summaryArgs are the summarize_results arguments of job j's summary: the
  // fields get_job names for it (summary_field, summary_stats_field).
  function summaryArgs(j) {
    const a = { job_id: j.job_id };
    if (j.summary_field) a.field = j.summary_field;
    if (j.summary_stats_field) a.stats_field = j.summary_stats_field;
    return a;
  }

  const decimal = v => (Math.round(Number(v) * 1e4) / 1e4).toLocaleString('en-US', { maximumFractionDigits: 4 });

  // summaryChart draws a summarize_results answer of job j (null when there
  // is nothing to draw): the records by the field's values as bars, in the
  // answer's order (most first), then the rest and those without the field;
  // the numeric statistics of its stats field; and, for a job retried, the
  // failures by code left after the retries. A job's own failures by code
  // are jobCard's (see cardFailures).
  function summaryChart(j, sum) {
    const retried = !!(j.retried_by && j.retried_by.length);
    if (!sum || (!sum.field && !sum.stats && !retried)) return null;
    const box = el('section', { class: 'results-summary', 'data-records': sum.records },
      el('p', { class: 'meta' }, `Summary of ${num(sum.records)} records, each by its latest outcome (retries included)`));
    if (sum.field) {
      const rows = (sum.values || []).map(c => [c.value, c.count]);
      box.append(el('h3', {}, 'Records by ', el('code', {}, sum.field)),
        rows.length ? barTable('values', rows) : el('p', { class: 'meta' }, `No record has ${sum.field}.`));
      const rest = [];
      if (sum.other) rest.push(`other values: ${num(sum.other)}${sum.values_capped ? ' (too many distinct values to count apart)' : ''}`);
      if (sum.missing) rest.push(`without ${sum.field}: ${num(sum.missing)}`);
      if (rest.length) box.append(el('p', { class: 'meta rest', 'data-other': sum.other || 0, 'data-missing': sum.missing || 0 }, rest.join(' · ')));
    }
    const st = sum.stats;
    if (st) {
      box.append(el('h3', {}, el('code', {}, st.field)));
      box.append(st.count ? el('dl', { class: 'stats numbers', 'data-field': st.field },
        stat('count', num(st.count)), stat('min', decimal(st.min)), stat('max', decimal(st.max)), stat('mean', decimal(st.mean)),
        stat(st.approximate ? 'p50 (sampled)' : 'p50', decimal(st.p50)), stat(st.approximate ? 'p90 (sampled)' : 'p90', decimal(st.p90)))
        : el('p', { class: 'meta' }, `No record has a number in ${st.field}.`));
      if (st.not_numbers) box.append(el('p', { class: 'meta' }, `${num(st.not_numbers)} records have ${st.field} that is not a number.`));
    }
    if (retried) {
      const left = summaryFailures(sum);
      box.append(el('h3', {}, 'Failures left after the retries'),
        Object.keys(left).length ? failureTable(left) : el('p', { class: 'meta' }, 'None: every record succeeded in the end.'));
    }
    return box;
  }

  // cardFailures are the failures by code jobCard shows for j: the summary's
  // (the whole job, exact) unless j was retried (then the summary's are what
  // the retries left), else those counted from its failed records (or null).
  function cardFailures(j, sum, failedRecords) {
    if (sum && !(j.retried_by && j.retried_by.length)) return summaryFailures(sum);
    return failedRecords ? countFailures(failedRecords) : null;
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
    const stats = card.querySelector('dl.stats');
    if (j.deadline) stats.append(stat('deadline', j.deadline.replace('T', ' ').replace(/Z$/, ' UTC')));
    const rd = j.cost && j.cost.redrive;
    if (rd) stats.append(stat('re-driven on demand', `${num(rd.records)} records · +${usd(rd.extra_usd)} over batch`));
    if (j.error) card.append(el('p', { class: 'error' }, j.error));
    for (const w of j.warnings || []) card.append(el('p', { class: 'warning' }, w));
    if (failures && Object.keys(failures).length) card.append(el('h3', {}, 'Failures by error code'), failureTable(failures));
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

  // ---- charts: per day by model, and failures by error code ------------

  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    for (const k of kids) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  const PALETTE = ['#2456c7', '#1a7f37', '#c2410c', '#7c3aed', '#0e7490', '#b91c1c', '#a16207', '#4b5563'];
  const short = v => v >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : v >= 1e3 ? (v / 1e3).toFixed(1) + 'k' : (Math.round(v * 100) / 100).toString();

  // stackedBars draws one value per day, stacked by model, as a scalable SVG
  // (width follows its container: no fixed pixel width to overflow).
  function stackedBars(title, days, models, value, fmt) {
    const W = 600, H = 150, pad = 28, bw = Math.min(36, Math.max(4, (W - pad) / Math.max(days.length, 1) - 6));
    let max = 0;
    for (const d of days) max = Math.max(max, models.reduce((a, m) => a + (value(d, m) || 0), 0));
    const g = svg('svg', { viewBox: `0 0 ${W} ${H + 18}`, width: '100%', role: 'img', 'aria-label': title, class: 'chart' });
    g.append(svg('title', {}, title));
    days.forEach((d, i) => {
      let y = H;
      const x = pad + i * (bw + 6);
      models.forEach((m, k) => {
        const v = value(d, m) || 0;
        if (!v || !max) return;
        const h = Math.max(1, (H - 10) * v / max);
        y -= h;
        g.append(svg('rect', { x, y, width: bw, height: h, fill: PALETTE[k % PALETTE.length] }, svg('title', {}, `${d} · ${m}: ${fmt(v)}`)));
      });
      if (days.length <= 16 || i % Math.ceil(days.length / 8) === 0) g.append(svg('text', { x: x + bw / 2, y: H + 14, 'text-anchor': 'middle', class: 'tick' }, d.slice(5)));
    });
    g.append(svg('text', { x: 0, y: 10, class: 'tick' }, fmt(max)), svg('line', { x1: pad - 4, x2: W, y1: H, y2: H, class: 'axis' }));
    return el('figure', { class: 'chartbox' }, el('figcaption', {}, title), g);
  }

  function legend(models) {
    return el('ul', { class: 'legend' }, models.map((m, k) => el('li', {},
      svg('svg', { width: 10, height: 10, 'aria-hidden': 'true' }, svg('rect', { width: 10, height: 10, fill: PALETTE[k % PALETTE.length] })), ' ', m)));
  }

  // usageCharts: jobs, records, tokens and cost per day (by creation day, UTC)
  // stacked by model, and failures by error code when given.
  function usageCharts(jobs, failures) {
    const byDay = new Map(), models = [];
    for (const j of jobs) {
      const d = (j.created_at || '').slice(0, 10);
      if (!d) continue;
      if (!models.includes(j.model)) models.push(j.model);
      const row = byDay.get(d) || new Map();
      const c = row.get(j.model) || { jobs: 0, records: 0, tokens: 0, cost: 0 };
      c.jobs++; c.records += j.record_count || 0; c.tokens += (j.input_tokens || 0) + (j.output_tokens || 0); c.cost += j.cost_usd || 0;
      row.set(j.model, c); byDay.set(d, row);
    }
    const days = [...byDay.keys()].sort();
    const pick = k => (d, m) => { const c = byDay.get(d).get(m); return c ? c[k] : 0; };
    const box = el('section', { class: 'usage' });
    if (!days.length) return box;
    box.append(legend(models), el('div', { class: 'charts' },
      stackedBars('Jobs per day', days, models, pick('jobs'), short),
      stackedBars('Records per day', days, models, pick('records'), short),
      stackedBars('Tokens per day', days, models, pick('tokens'), short),
      stackedBars('Cost per day (USD)', days, models, pick('cost'), v => '$' + (v < 1 ? v.toFixed(4) : v.toFixed(2)))));
    if (failures && Object.keys(failures).length)
      box.append(el('figure', { class: 'chartbox' }, el('figcaption', {}, 'Failures by error code'), failureTable(failures)));
    return box;
  }

  g.McpbatchView = { el, jobCard, jobList, countFailures, progress, usageCharts, summaryChart, summaryArgs, cardFailures };
})(globalThis);
