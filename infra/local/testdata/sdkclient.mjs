// Drives make dev with the official TypeScript MCP SDK (@modelcontextprotocol/client,
// v2, the 2026-07-28 line) the way an application would, and prints one JSON line
// per step for the Go test to check. Usage:
//   node sdkclient.mjs <sdk node_modules dir> <mcp url> <bearer key> <scenario>
// scenarios: bigrequest-modern, bigrequest-legacy, discover, legacy, tasks
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [, , modules, url, key, scenario] = process.argv;
const sdk = await import(pathToFileURL(path.join(modules, '@modelcontextprotocol/client/dist/index.mjs')).href);
const { Client, StreamableHTTPClientTransport } = sdk;

const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const modern = !scenario.endsWith('legacy');

const client = new Client({ name: 'mcpbatch-e2e', version: '1.0.0' },
  modern ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
await client.connect(transport);
out('connect', { protocolVersion: client.getNegotiatedProtocolVersion(), server: client.getServerVersion()?.name,
  extensions: Object.keys(client.getServerCapabilities()?.extensions ?? {}) });

const tools = await client.listTools();
out('tools', { names: tools.tools.map(t => t.name) });

if (scenario.startsWith('bigrequest')) {
  // About 7 MB of records: over the 6 MB Function URL limit.
  const prompt = 'Summarise the following passage in one line. '.repeat(40);
  const records = [];
  for (let i = 0, size = 0; size < 7 * 1024 * 1024; i++) {
    records.push({ id: `r${i}`, prompt });
    size += JSON.stringify(records[i]).length + 1;
  }
  let res, error;
  try {
    res = await client.callTool({ name: 'submit_batch', arguments: { model: 'anthropic.claude-haiku-4-5-20251001-v1:0', records } });
  } catch (e) { error = String(e); }
  out('big', { isError: res?.isError ?? null, text: res?.content?.[0]?.text ?? null, error: error ?? null });
}

if (scenario === 'discover') {
  const d = await client.discover();
  out('discover', { supportedVersions: d.supportedVersions, tools: !!d.capabilities?.tools,
    extensions: Object.keys(d.capabilities?.extensions ?? {}) });
  // subscriptions/listen: the server honours none of the filter (the tool list
  // is fixed per deployment; job status comes from tasks/get, get_job or
  // notify), so the stream ends at once instead of holding a Lambda open.
  const t0 = Date.now();
  const sub = await client.listen({ toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ['mcpbatch://jobs/x'] });
  const closed = await Promise.race([sub.closed, new Promise(r => setTimeout(() => r('still open'), 10000))]);
  out('listen', { honored: sub.honoredFilter, closed, ms: Date.now() - t0 });
  // A stateless 2026-07-28 call by hand, with no initialize before it: the
  // per-request _meta envelope and the Mcp-Method / Mcp-Name headers.
  const call = async (name, headerName) => {
    const r = await fetch(url, { method: 'POST', headers: {
      Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': headerName,
    }, body: JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name, arguments: {}, _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw-fetch', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    } }, id: 5 }) });
    return { status: r.status, body: (await r.text()).slice(0, 400) };
  };
  out('stateless', await call('list_jobs', 'list_jobs'));
  out('wrongname', await call('list_jobs', 'get_job'));
}

if (scenario === 'tasks') {
  // The official tasks-extension client (@modelcontextprotocol/ext-tasks). On a
  // 2026-07-28 server it needs the host's raw dispatch; this one is plain
  // Streamable HTTP with the standard headers, Mcp-Name from the ext-tasks
  // context (the task id) or params.name.
  const ext = await import(pathToFileURL(path.join(modules, '@modelcontextprotocol/ext-tasks/dist/client/index.js')).href);
  let nextId = 1000;
  const rawDispatch = async (request, options = {}) => {
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': request.method, ...(options.context?.headers ?? {}) };
    if (!Object.keys(headers).some(h => h.toLowerCase() === 'mcp-name') && request.params?.name) headers['Mcp-Name'] = request.params.name;
    const r = await fetch(url, { method: 'POST', headers, signal: options.signal,
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, ...request }) });
    let text = await r.text();
    if ((r.headers.get('content-type') ?? '').startsWith('text/event-stream'))
      text = text.split('\n').filter(l => l.startsWith('data:')).map(l => l.slice(5)).pop() ?? '';
    const msg = JSON.parse(text);
    return msg.error ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result };
  };
  const session = ext.createTaskSessionFromClient(client, { endpointId: 'make-dev', rawDispatch,
    v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo: { name: 'mcpbatch-e2e', version: '1.0.0' }, clientCapabilities: {} } });
  const model = 'anthropic.claude-haiku-4-5-20251001-v1:0';
  const recs = n => Array.from({ length: n }, (_, i) => ({ id: `q${i}`, prompt: `Summarise fact #${i}` }));

  // Create, follow with tasks/get, result inline once terminal.
  const exec = await session.callTool('submit_batch', { model, records: recs(100) });
  const ref = exec.serializeReference?.();
  const taskId = ref?.taskId ?? exec.handle?.taskId;
  // Raw tasks/get calls declare the extension, as the spec requires.
  const declared = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'mcpbatch-e2e', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } } } };
  const first = await rawDispatch({ method: 'tasks/get', params: { taskId, ...declared } }, { context: { headers: { 'Mcp-Name': taskId } } });
  out('created', { taskId, status: first.result?.status, statusMessage: first.result?.statusMessage });
  const { outcome } = await exec.settle();
  const result = ext.resultFromTaskOutcome(outcome);
  out('settled', { kind: outcome.kind ?? outcome.status ?? null, status: result?.structuredContent?.status, jobId: result?.structuredContent?.job_id, text: result?.content?.[0]?.text });

  // Cancel through the session.
  const exec2 = await session.callTool('submit_batch', { model, records: recs(100) });
  const id2 = exec2.serializeReference?.()?.taskId ?? exec2.handle?.taskId;
  await session.cancelTask(id2);
  const cancelled = await exec2.settle().then(r => r.outcome, e => ({ error: String(e) }));
  out('cancelled', { taskId: id2, outcome: cancelled.kind ?? cancelled.status ?? cancelled.error ?? null });

  // An unknown task id.
  const unknown = await rawDispatch({ method: 'tasks/get', params: { taskId: 'no-such-task', ...declared } }, { context: { headers: { 'Mcp-Name': 'no-such-task' } } });
  out('unknown', { error: unknown.error ?? null });
  await session.close();
}

// The session goes on: a normal call after whatever came before.
const after = await client.callTool({ name: 'list_jobs', arguments: {} });
out('after', { isError: after.isError ?? false, text: after.content?.[0]?.text ?? '' });
await client.close();
