// mcpapp.js: the MCP App around jobview.js. It renders the tool result the
// host hands over at once, then follows the job through the host bridge
// (get_job, get_job_results status=failed) until it is terminal. Every call
// goes through the host: the frame itself reaches no network.
const { App, PostMessageTransport } = globalThis.McpApps;
const V = globalThis.McpbatchView;
const root = document.getElementById('app');
const app = new App({ name: 'mcpbatch-job-view', version: '1.0.0' }, {});
let current = null, timer = null, seq = 0, input = {};

function status(text) { document.getElementById('status').textContent = text; }
function show(node) { root.replaceChildren(node); }
function structured(r) { return r && (r.structuredContent || null); }

const actions = {
  async retry(j) {
    status('Retrying the failed records…');
    const r = await app.callServerTool({ name: 'retry_failed', arguments: { job_id: j.job_id } });
    const out = structured(r);
    if (r.isError || !out || !out.job_id) { status(text(r) || 'retry_failed failed'); return; }
    status(`Retry job ${out.job_id} started.`);
    follow(out.job_id);
  },
  async exportLink(j, format) {
    status(`Writing the ${format} export…`);
    const r = await app.callServerTool({ name: 'export_results', arguments: { job_id: j.job_id, format } });
    const out = structured(r);
    if (r.isError || !out || !out.url) { status(text(r) || 'export_results failed'); return; }
    status(`${format.toUpperCase()} export: ${out.records} records.`);
    await app.openLink({ url: out.url });
  },
};

function text(r) { return ((r && r.content) || []).map(c => c.text || '').join(' '); }

function render(job, failures, sum) {
  current = job;
  const card = V.jobCard(job, failures, actions);
  const chart = V.summaryChart(job, sum);
  if (chart) card.append(chart);
  show(card);
  document.body.dataset.rendered = job.job_id;
  document.body.dataset.terminal = String(!!job.terminal);
}

// follow polls get_job until the job is terminal; failed records are counted
// by error code once there are some.
async function follow(jobId) {
  const mine = ++seq;
  clearTimeout(timer);
  for (;;) {
    const r = await app.callServerTool({ name: 'get_job', arguments: { job_id: jobId } });
    if (mine !== seq) return;
    const job = structured(r);
    if (r.isError || !job) { status(text(r) || 'get_job failed'); return; }
    let sum = null, failed = null;
    // A finished job is summarized whole (charted, its failures by code
    // exact); while it runs, or once retried, its failed records are counted.
    if (job.terminal) {
      const sr = await app.callServerTool({ name: 'summarize_results', arguments: V.summaryArgs(job) });
      sum = sr.isError ? null : structured(sr);
    }
    if (job.failed > 0 && V.cardFailures(job, sum, null) === null) {
      const fr = await app.callServerTool({ name: 'get_job_results', arguments: { job_id: jobId, status: 'failed', limit: 500 } });
      failed = (structured(fr) || {}).records;
    }
    const failures = V.cardFailures(job, sum, failed);
    if (mine !== seq) return;
    render(job, failures, sum);
    if (job.terminal) { status(`Job ${job.status.replace(/_/g, ' ')}.`); return; }
    status('Following the job…');
    await new Promise(res => { timer = setTimeout(res, job.mode === 'on_demand' ? 1000 : 5000); });
    if (mine !== seq) return;
  }
}

// The tool's arguments arrive first: a handle lacks the job's name and size.
app.ontoolinput = (params) => { input = (params && params.arguments) || {}; };

// followReport follows a report pipeline's run (run_pipeline): its job
// belongs to the pipeline, so get_report, which any caller may read, gives
// its counts.
async function followReport(pipeline, date) {
  const mine = ++seq;
  for (;;) {
    const r = await app.callServerTool({ name: 'get_report', arguments: { pipeline, date } });
    if (mine !== seq) return;
    const v = structured(r);
    if (r.isError || !v || !v.run) { status(text(r) || 'get_report failed'); return; }
    const run = v.run, sm = v.summary || {};
    const terminal = ['completed', 'partially_completed', 'failed', 'cancelled', 'expired'].includes(run.job_status);
    render({ job_id: run.job_id, name: `${run.pipeline} ${run.date}`, status: run.job_status, model: sm.model || '', provider: '',
      mode: run.mode, record_count: run.records, succeeded: run.succeeded, failed: run.failed, terminal,
      input_tokens: sm.input_tokens, output_tokens: sm.output_tokens, cost_usd: sm.cost_usd_estimate }, null);
    if (terminal && (run.report_ready || run.job_status !== 'completed')) { status(run.report_ready ? 'Report ready.' : `Run ${run.job_status}.`); return; }
    status('Following the pipeline run…');
    await new Promise(res => { timer = setTimeout(res, 5000); });
    if (mine !== seq) return;
  }
}

app.ontoolresult = (params) => {
  const sc = params && params.structuredContent;
  if (!sc) return;
  if (Array.isArray(sc.jobs)) {
    show(V.jobList(sc.jobs, j => follow(j.job_id)));
    document.body.dataset.rendered = 'list';
    return;
  }
  const id = sc.job_id;
  if (!id) return;
  // A handle (submit_batch, retry_failed, …) has no counts yet: draw it now
  // as a job with nothing done, then follow.
  const n = sc.record_count || sc.records || (Array.isArray(input.records) ? input.records.length : 0);
  render({ succeeded: 0, failed: 0, model: input.model || '', provider: '', name: input.name, ...sc,
    record_count: n, status: sc.status || sc.job_status || 'submitted' }, null);
  if (sc.pipeline && sc.date) followReport(sc.pipeline, sc.date); else follow(id);
};

await app.connect(new PostMessageTransport(window.parent, window.parent));
