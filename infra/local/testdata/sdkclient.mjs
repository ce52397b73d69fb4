// Drives make dev with the official TypeScript MCP SDK (@modelcontextprotocol/client,
// v2, the 2026-07-28 line) the way an application would, and prints one JSON line
// per step for the Go test to check. Usage:
//   node sdkclient.mjs <sdk node_modules dir> <mcp url> <bearer key> <scenario>
// scenarios: bigrequest-modern, bigrequest-legacy, discover, legacy
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
  for (let i = 0; JSON.stringify(records).length < 7 * 1024 * 1024; i++) records.push({ id: `r${i}`, prompt });
  let res, error;
  try {
    res = await client.callTool({ name: 'submit_batch', arguments: { model: 'anthropic.claude-3-haiku-20240307-v1:0', records } });
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

// The session goes on: a normal call after whatever came before.
const after = await client.callTool({ name: 'list_jobs', arguments: {} });
out('after', { isError: after.isError ?? false, text: after.content?.[0]?.text ?? '' });
await client.close();
