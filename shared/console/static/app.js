// mcpbatch console: a small client of this endpoint's MCP tools over POST /mcp
// (JSON-RPC 2.0, stateless Streamable HTTP; replies come as application/json
// or as a text/event-stream). The API key lives in sessionStorage of this tab
// only (or in memory when storage is unavailable); there is no cookie.
// Everything shown is built with DOM nodes and textContent, never innerHTML:
// record outputs and errors are untrusted text.
"use strict";
(() => {
  const V = globalThis.McpbatchView; // jobview.js, shared with the MCP App
  const KEY = "mcpbatch.key";
  const PROTOCOL = "2025-06-18";
  const REFRESH_MS = 10000;

  let memoryKey = "";
  let session = null; // {protocolVersion} once initialize succeeded for the current key
  let rpcID = 0;
  let timer = 0;
  let generation = 0; // bumps on each route so stale renders are dropped

  class AuthError extends Error {}
  class RPCError extends Error {
    constructor(message, code) { super(message); this.code = code; }
  }
  class ToolError extends Error {}

  // ---- key -------------------------------------------------------------

  function getKey() {
    try { return sessionStorage.getItem(KEY) || memoryKey; } catch (_) { return memoryKey; }
  }
  function setKey(k) {
    memoryKey = k;
    session = null;
    try {
      if (k) sessionStorage.setItem(KEY, k); else sessionStorage.removeItem(KEY);
    } catch (_) { /* memory only */ }
  }

  // ---- MCP over HTTP ---------------------------------------------------

  function headers() {
    const h = {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
      "Authorization": "Bearer " + getKey(),
    };
    if (session && session.protocolVersion) h["MCP-Protocol-Version"] = session.protocolVersion;
    return h;
  }

  async function post(message) {
    if (!getKey()) throw new AuthError("");
    let resp;
    try {
      resp = await fetch("/mcp", {
        method: "POST", headers: headers(), body: JSON.stringify(message),
        credentials: "omit", cache: "no-store", referrerPolicy: "no-referrer",
      });
    } catch (e) {
      throw new Error("The MCP endpoint could not be reached: " + e.message);
    }
    if (resp.status === 401) {
      throw new AuthError("The key was refused (HTTP 401). Check it and enter it again.");
    }
    return resp;
  }

  // fromEventStream finds the JSON-RPC reply with the given id in an SSE body
  // (events separated by blank lines; an event's data lines joined by \n).
  function fromEventStream(text, id) {
    for (const block of text.replace(/\r\n?/g, "\n").split("\n\n")) {
      const data = block.split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n");
      if (!data) continue;
      let msg;
      try { msg = JSON.parse(data); } catch (_) { continue; }
      for (const m of Array.isArray(msg) ? msg : [msg]) {
        if (m && m.id === id && (m.result !== undefined || m.error !== undefined)) return m;
      }
    }
    return null;
  }

  async function rpc(method, params) {
    const id = ++rpcID;
    const resp = await post({ jsonrpc: "2.0", id, method, params });
    const type = (resp.headers.get("Content-Type") || "").toLowerCase();
    const body = await resp.text();
    let msg = null;
    if (type.includes("text/event-stream")) {
      msg = fromEventStream(body, id);
    } else if (type.includes("application/json")) {
      try { msg = JSON.parse(body); } catch (_) { msg = null; }
    }
    if (!msg) {
      throw new Error(`/mcp answered HTTP ${resp.status} to ${method}: ${body.trim().slice(0, 300) || "no reply"}`);
    }
    if (msg.error) throw new RPCError(msg.error.message || "error " + msg.error.code, msg.error.code);
    return msg.result;
  }

  async function ensureSession() {
    if (session) return;
    const r = await rpc("initialize", {
      protocolVersion: PROTOCOL, capabilities: {},
      clientInfo: { name: "mcpbatch-console", version: "1" },
    });
    session = { protocolVersion: r.protocolVersion || PROTOCOL };
    // A notification: the server answers 202 with no body.
    await post({ jsonrpc: "2.0", method: "notifications/initialized" });
  }

  function textOf(result) {
    return (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  }

  async function callTool(name, args) {
    await ensureSession();
    const r = await rpc("tools/call", { name, arguments: args || {} });
    if (r.isError) throw new ToolError(textOf(r) || name + " failed");
    if (r.structuredContent) return r.structuredContent;
    try { return JSON.parse(textOf(r)); } catch (_) { return { text: textOf(r) }; }
  }

  function unknownTool(e) {
    return e instanceof RPCError && /unknown tool/i.test(e.message);
  }

  // ---- DOM helpers -----------------------------------------------------

  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") n.className = v;
      else if (k === "href") { const h = safeHref(v); if (h) n.href = h; }
      else if (k === "onclick") n.addEventListener("click", v);
      else if (k in n && typeof v !== "string") n[k] = v;
      else n.setAttribute(k, v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      n.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return n;
  }

  // safeHref keeps in-page routes and http(s) links; anything else (javascript:,
  // data:, file:) is not made a link.
  function safeHref(v) {
    if (typeof v !== "string") return null;
    if (v.startsWith("#/")) return v;
    try {
      const u = new URL(v, location.href);
      return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
    } catch (_) { return null; }
  }

  // link makes an http(s) link; any other URL (make dev's file:// exports) is
  // shown as text to copy, since a web page cannot open it.
  function link(url, text) {
    return safeHref(url) ? el("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, text)
      : el("span", null, text, " ", el("span", { class: "mono wrap small" }, url));
  }

  const route = (...parts) => "#/" + parts.map(encodeURIComponent).join("/");
  const num = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : "—");
  function when(iso) {
    if (!iso) return "—";
    const d = new Date(iso);
    return isNaN(d) ? iso : d.toLocaleString();
  }
  function cost(v) {
    if (typeof v !== "number") return "—";
    return "$" + (v < 0.01 && v > 0 ? v.toFixed(4) : v.toFixed(2));
  }
  function statusBadge(s) { return el("span", { class: "status " + (s || "") }, (s || "unknown").replace(/_/g, " ")); }
  function progressOf(j) {
    const done = (j.succeeded || 0) + (j.failed || 0);
    return el("span", { class: "progress-cell" }, V.progress(j), el("span", { class: "small muted" }, `${num(done)} / ${num(j.record_count || 0)}`));
  }

  function flash(msg) {
    const f = $("flash");
    f.textContent = msg || "";
    f.hidden = !msg;
  }

  function table(columns, rows) {
    return el("table", null,
      el("thead", null, el("tr", null, columns.map((c) => el("th", { class: c.num ? "num" : "" }, c.title)))),
      el("tbody", null, rows));
  }

  // ---- views -----------------------------------------------------------

  function showKeyForm(message) {
    clearTimeout(timer);
    $("nav").hidden = true;
    $("view").replaceChildren();
    flash("");
    $("key-view").hidden = false;
    const m = $("key-message");
    m.textContent = message || "";
    m.hidden = !message;
    document.body.dataset.ready = "key";
    $("key-input").focus();
  }

  function setView(name, ...children) {
    $("key-view").hidden = true;
    $("nav").hidden = false;
    for (const a of document.querySelectorAll("#nav a")) {
      a.classList.toggle("active", a.dataset.view === name);
    }
    $("view").replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
  }

  function refreshLater(gen, fn) {
    clearTimeout(timer);
    timer = setTimeout(() => { if (gen === generation && !document.hidden) run(fn); }, REFRESH_MS);
  }

  const jobColumns = [
    { title: "Job" }, { title: "Status" }, { title: "Progress" }, { title: "Model" },
    { title: "Records", num: true }, { title: "Succeeded", num: true }, { title: "Failed", num: true },
    { title: "Tokens in / out", num: true }, { title: "Cost", num: true }, { title: "Created" },
  ];

  // jobRow is a table row on wide screens and a card on narrow ones (the
  // data-label of each cell names it there).
  function jobRow(j) {
    const cell = (label, attrs, ...kids) => el("td", Object.assign({ "data-label": label }, attrs || {}), ...kids);
    return el("tr", { "data-job": j.job_id },
      cell("Job", { class: "name" }, el("a", { href: route("job", j.job_id) }, j.name || j.job_id),
        j.name ? el("div", { class: "small muted mono wrap" }, j.job_id) : null),
      cell("Status", null, statusBadge(j.status)),
      cell("Progress", null, progressOf(j)),
      cell("Model", null, el("div", { class: "small wrap" }, j.model), el("div", { class: "small muted" }, [j.provider, j.mode].filter(Boolean).join(" · "))),
      cell("Records", { class: "num" }, num(j.record_count)),
      cell("Succeeded", { class: "num" }, num(j.succeeded)),
      cell("Failed", { class: "num" + (j.failed ? " error-text" : "") }, num(j.failed)),
      cell("Tokens in / out", { class: "num" }, `${num(j.input_tokens)} / ${num(j.output_tokens)}`),
      cell("Cost", { class: "num" }, cost(j.cost_usd)),
      cell("Created", { class: "small" }, when(j.created_at)));
  }

  // usage draws the charts of the jobs listed so far, with the failures of
  // the most recent jobs that have some counted by error code.
  async function usage(gen, box, jobs) {
    const failures = {};
    for (const j of jobs.filter((x) => x.failed > 0).slice(0, 5)) {
      const out = await callTool("get_job_results", { job_id: j.job_id, status: "failed", limit: 500 });
      if (gen !== generation) return;
      for (const [code, n] of Object.entries(V.countFailures(out.records))) failures[code] = (failures[code] || 0) + n;
    }
    box.replaceChildren(el("h2", null, "Usage"), V.usageCharts(jobs, failures));
  }

  async function viewJobs(gen) {
    const body = el("tbody");
    const more = el("button", { class: "secondary", hidden: true }, "Load more");
    const empty = el("p", { class: "muted", hidden: true }, "No jobs yet. Submit one with the submit_batch tool.");
    const refresh = el("button", { class: "secondary", onclick: () => run(viewJobs) }, "Refresh");
    const charts = el("div", { id: "usage" });
    setView("jobs",
      el("div", { class: "toolbar" }, el("h1", null, "Jobs"), refresh),
      charts,
      el("table", { class: "jobs-table" },
        el("thead", null, el("tr", null, jobColumns.map((c) => el("th", { class: c.num ? "num" : "" }, c.title)))),
        body),
      empty, el("p", null, more));
    let cursor = "";
    let running = false;
    const listed = [];
    async function page() {
      const out = await callTool("list_jobs", cursor ? { limit: 50, cursor } : { limit: 50 });
      if (gen !== generation) return;
      for (const j of out.jobs || []) {
        body.append(jobRow(j));
        listed.push(j);
        running = running || !j.terminal;
      }
      cursor = out.next_cursor || "";
      more.hidden = !cursor;
      empty.hidden = body.children.length > 0;
    }
    more.addEventListener("click", () => guard(async () => { more.disabled = true; try { await page(); } finally { more.disabled = false; } }));
    await page();
    await usage(gen, charts, listed);
    if (running) refreshLater(gen, viewJobs);
  }

  async function viewJob(gen, id) {
    const j = await callTool("get_job", { job_id: id });
    if (gen !== generation) return;
    const actions = el("div", { class: "toolbar" },
      el("h1", null, j.name || j.job_id, " ", statusBadge(j.status)),
      el("button", { class: "secondary", onclick: () => run((g) => viewJob(g, id)) }, "Refresh"));
    const retryMsg = el("p", { class: "error", role: "alert", hidden: true });
    if (j.terminal && j.failed > 0) {
      const btn = el("button", { id: "retry-failed" }, `Retry ${num(j.failed)} failed`);
      btn.addEventListener("click", () => retry(btn, retryMsg, j.job_id));
      actions.append(btn);
    }
    const facts = [
      ["Job id", el("span", { class: "mono" }, j.job_id)], ["Provider", j.provider],
      ["Model", j.model], ["Mode", j.mode || "—"],
      ["Records", num(j.record_count)], ["Succeeded", num(j.succeeded)],
      ["Failed", num(j.failed)], ["Bad input lines", num(j.bad_lines)],
      ["Input tokens", num(j.input_tokens)], ["Output tokens", num(j.output_tokens)],
      ["Cache read / write", `${num(j.cache_read_tokens || 0)} / ${num(j.cache_write_tokens || 0)}`], ["Cost", cost(j.cost_usd)],
    ];
    if (j.provider_status) facts.push(["Provider status", j.provider_status]);
    if (j.deadline) facts.push(["Deadline", j.deadline]);
    if (j.stop_batch_by) facts.push(["Batch parts stop by", j.stop_batch_by]);
    const rd = j.cost && j.cost.redrive;
    if (rd) facts.push(["Re-driven on demand", `${num(rd.records)} records: ${cost(rd.on_demand_usd)} (${cost(rd.at_batch_price_usd)} at the batch price)`]);
    if (j.retry_of) facts.push(["Retry of", el("a", { href: route("job", j.retry_of) }, j.retry_of)]);
    const retriedBy = [].concat(j.retried_by || []);
    if (retriedBy.length) facts.push(["Retried by", retriedBy.map((c) => el("a", { href: route("job", c) }, c, " "))]);
    const dl = el("dl", { class: "facts" }, facts.map(([k, v]) => [el("dt", null, k), el("dd", null, v)]));

    const steps = [
      ["Created", j.created_at],
      ["Submitted to " + (j.provider || "provider"), j.submitted_at],
      ["Last change: " + (j.status || "").replace(/_/g, " "), j.updated_at],
      [j.terminal ? "Finished" : "Not finished yet", j.completed_at],
      ["Results expire", j.expires_at],
    ].filter(([label, t]) => t || label === "Not finished yet");
    const timeline = el("ol", { class: "timeline" }, steps.map(([label, t]) =>
      el("li", { class: t ? "" : "pending" }, el("strong", null, label), " ", el("span", { class: "muted small" }, when(t)))));

    const exportsOut = el("div", { class: "links" });
    const exportButtons = el("div", { class: "toolbar" },
      [["JSONL", "jsonl", "all"], ["CSV", "csv", "all"], ["Failed only (JSONL)", "jsonl", "failed"]].map(([label, format, status]) => {
        const b = el("button", { class: "secondary" }, "Export " + label);
        b.addEventListener("click", () => exportResults(b, exportsOut, j.job_id, format, status));
        return b;
      }));

    const failedBox = el("div");
    const summary = el("div", { class: "card summary" }, V.jobCard(j, null, {}));
    setView("jobs",
      el("p", { class: "small" }, el("a", { href: "#/jobs" }, "← all jobs")),
      actions, retryMsg,
      summary, // shows the job's error and warnings too
      el("div", { class: "card" }, dl),
      el("h2", null, "Timeline"), timeline,
      el("h2", null, "Export results"), exportButtons, exportsOut,
      el("h2", null, "Failed records"), failedBox);
    const failedFirst = await failedRecords(gen, failedBox, j);
    if (gen !== generation) return;
    // A finished job's whole summary (charted, and its failures by code
    // exact); the failed records listed are counted while it runs.
    const sum = j.terminal ? await jobSummary(j) : null;
    if (gen !== generation) return;
    if (sum || failedFirst) {
      const card = V.jobCard(j, V.cardFailures(j, sum, failedFirst), {});
      const chart = V.summaryChart(j, sum);
      if (chart) card.append(chart);
      summary.replaceChildren(card);
    }
    if (!j.terminal) refreshLater(gen, (g) => viewJob(g, id));
  }

  // jobSummary is summarize_results of j (null on a server without it).
  async function jobSummary(j) {
    try {
      return await callTool("summarize_results", V.summaryArgs(j));
    } catch (e) {
      if (unknownTool(e)) return null;
      throw e;
    }
  }

  async function failedRecords(gen, box, j) {
    if (!j.failed) {
      box.replaceChildren(el("p", { class: "muted" }, j.terminal ? "No failed records." : "No failed records so far."));
      return;
    }
    const body = el("tbody");
    const more = el("button", { class: "secondary", hidden: true }, "Load more");
    box.replaceChildren(el("table", { id: "failed-records" },
      el("thead", null, el("tr", null, el("th", null, "Record"), el("th", null, "Error code"), el("th", null, "Error"))), body),
    el("p", null, more));
    let cursor = "";
    const seen = [];
    async function page() {
      const args = { job_id: j.job_id, status: "failed", limit: 100 };
      if (cursor) args.cursor = cursor;
      const out = await callTool("get_job_results", args);
      if (gen !== generation) return;
      for (const r of out.records || []) {
        seen.push(r);
        body.append(el("tr", { "data-record": r.id },
          el("td", { class: "mono" }, r.id),
          el("td", { class: "mono" }, r.error_code || "—"),
          el("td", { class: "wrap" }, r.error_message || "")));
      }
      cursor = out.next_cursor || "";
      more.hidden = !cursor;
    }
    more.addEventListener("click", () => guard(async () => { more.disabled = true; try { await page(); } finally { more.disabled = false; } }));
    await page();
    return seen;
  }

  async function retry(btn, msg, id) {
    btn.disabled = true;
    msg.hidden = true;
    try {
      const out = await callTool("retry_failed", { job_id: id });
      const child = out.job_id || (out.job && out.job.job_id);
      if (!child) throw new Error("retry_failed returned no job_id");
      location.hash = route("job", child);
    } catch (e) {
      if (e instanceof AuthError) { showKeyForm(e.message); return; }
      msg.textContent = unknownTool(e)
        ? "Retrying is not available on this server (it has no retry_failed tool)."
        : "Retry failed: " + e.message;
      msg.hidden = false;
    } finally {
      btn.disabled = false;
    }
  }

  async function exportResults(btn, out, id, format, status) {
    btn.disabled = true;
    try {
      const r = await callTool("export_results", { job_id: id, format, status });
      out.append(el("p", null, link(r.url, `${format.toUpperCase()} · ${status} · ${num(r.records)} records · ${num(r.bytes)} bytes`),
        " ", el("span", { class: "small muted" }, r.complete ? `link valid ${Math.round((r.expires_in_seconds || 0) / 60)} min` : "partial: the job is not finished")));
    } catch (e) {
      if (e instanceof AuthError) { showKeyForm(e.message); return; }
      out.append(el("p", { class: "error" }, "Export failed: " + e.message));
    } finally {
      btn.disabled = false;
    }
  }

  async function viewReports(gen) {
    setView("reports", el("div", { class: "toolbar" }, el("h1", null, "Pipeline runs")));
    let out;
    try {
      out = await callTool("list_reports", { limit: 100 });
    } catch (e) {
      if (!unknownTool(e)) throw e;
      $("view").append(el("p", { class: "muted" }, "This deployment has no report pipelines."));
      return;
    }
    if (gen !== generation) return;
    const rows = (out.reports || []).map((r) => el("tr", { "data-run": r.pipeline + "/" + r.date },
      el("td", null, r.pipeline), el("td", null, r.date),
      el("td", null, statusBadge(r.job_status), " ", el("a", { href: route("job", r.job_id), class: "small" }, "job")),
      el("td", { class: "num" }, num(r.records)), el("td", { class: "num" }, num(r.succeeded)), el("td", { class: "num" }, num(r.failed)),
      el("td", null, r.report_ready ? el("a", { href: route("report", r.pipeline, r.date) }, "report") : el("span", { class: "muted" }, "not ready"))));
    $("view").append(rows.length
      ? table([{ title: "Pipeline" }, { title: "Date" }, { title: "Job" }, { title: "Records", num: true },
        { title: "Succeeded", num: true }, { title: "Failed", num: true }, { title: "Report" }], rows)
      : el("p", { class: "muted" }, "No pipeline runs yet."));
  }

  async function viewReport(gen, pipeline, date) {
    const v = await callTool("get_report", { pipeline, date });
    if (gen !== generation) return;
    const run = v.run || {};
    const s = v.summary;
    const parts = [
      el("p", { class: "small" }, el("a", { href: "#/reports" }, "← all pipeline runs")),
      el("div", { class: "toolbar" }, el("h1", null, (s && s.title) || `${pipeline} · ${date}`, " ", statusBadge(run.job_status))),
      el("p", null, "Job ", el("a", { href: route("job", run.job_id) }, run.job_id)),
    ];
    if (!s) {
      parts.push(el("p", { class: "muted" }, "The report is not ready yet."));
    } else {
      const facts = [["Records", num(s.records)], ["Succeeded", num(s.succeeded)], ["Failed", num(s.failed)],
        ["Skipped documents", num(s.skipped_documents)], ["Tokens in / out", `${num(s.input_tokens)} / ${num(s.output_tokens)}`],
        ["Cost estimate", s.price_known ? cost(s.cost_usd_estimate) : "unknown price"], ["Duration", `${Math.round(s.duration_seconds || 0)} s`],
        ["Model", s.model]];
      parts.push(el("div", { class: "card" }, el("dl", { class: "facts" }, facts.map(([k, val]) => [el("dt", null, k), el("dd", null, val)]))));
      if ((s.categories || []).length) {
        parts.push(el("h2", null, "Categories"), table([{ title: s.category_field || "Category" }, { title: "Records", num: true }],
          s.categories.map((c) => el("tr", null, el("td", null, c.name), el("td", { class: "num" }, num(c.count))))));
      }
    }
    const links = Object.entries(v.links || {});
    if (links.length) parts.push(el("h2", null, "Files"), el("ul", { class: "files" }, links.map(([name, url]) => el("li", null, link(url, name)))));
    setView("reports", ...parts);
  }

  // ---- routing ---------------------------------------------------------

  async function guard(fn) {
    try {
      await fn();
      return true;
    } catch (e) {
      if (e instanceof AuthError) {
        setKey("");
        showKeyForm(e.message);
      } else {
        flash(e.message);
        document.body.dataset.ready = "error";
      }
      return false;
    }
  }

  function run(view) {
    const gen = ++generation;
    clearTimeout(timer);
    flash("");
    document.body.dataset.ready = "";
    return guard(async () => {
      await view(gen);
      if (gen === generation) document.body.dataset.ready = document.body.dataset.ready || currentView();
    });
  }

  function currentView() {
    return (location.hash.slice(2).split("/")[0]) || "jobs";
  }

  function dispatch() {
    if (!getKey()) { showKeyForm(""); return; }
    const [name, a, b] = location.hash.slice(2).split("/").map((p) => { try { return decodeURIComponent(p); } catch (_) { return p; } });
    switch (name) {
      case "job": return run((g) => viewJob(g, a));
      case "reports": return run(viewReports);
      case "report": return run((g) => viewReport(g, a, b));
      default: return run(viewJobs);
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("key-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const k = $("key-input").value.trim();
      if (!k) return;
      setKey(k);
      $("key-input").value = "";
      if (!location.hash) location.hash = "#/jobs"; else dispatch();
    });
    $("forget").addEventListener("click", () => { setKey(""); showKeyForm(""); });
    window.addEventListener("hashchange", dispatch);
    dispatch();
  });
})();
