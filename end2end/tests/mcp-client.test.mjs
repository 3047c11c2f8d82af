// The official MCP TypeScript SDK against a running Ledger server.
//
//   LEDGER_URL=http://127.0.0.1:PORT node --test tests/mcp-client.test.mjs
//
// (end2end/run.sh starts the server and sets LEDGER_URL.) Node 22+.
//
// The SDK (1.x) always sends its newest version (2025-11-25) in `initialize`
// and has no option to choose another one, so the legacy-version tests wrap
// the transport's `send` and rewrite the requested `protocolVersion` of the
// `initialize` request; everything after that (the negotiated
// `MCP-Protocol-Version` header, the session, tool calls) is the SDK's own.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const BASE = (process.env.LEDGER_URL ?? '').replace(/\/+$/, '');
if (!BASE) {
  throw new Error('LEDGER_URL is not set (e.g. http://127.0.0.1:3000); run end2end/run.sh');
}
const MCP_URL = `${BASE}/mcp`;

const PING_STRUCTURED = { ok: true, payments: { mode: 'off' }, principal: { kind: 'anonymous' } };

/** A fetch that records every HTTP exchange the transport makes. */
function recordingFetch(log) {
  return async (url, init = {}) => {
    const response = await fetch(url, init);
    log.push({ method: init.method ?? 'GET', status: response.status });
    return response;
  };
}

/**
 * An SDK client connected over Streamable HTTP. `requestVersion`, when given,
 * replaces the protocolVersion the SDK puts in `initialize`.
 */
async function connect({ requestVersion } = {}) {
  const http = [];
  const errors = [];
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    fetch: recordingFetch(http),
  });
  if (requestVersion) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (message.method === 'initialize') {
        message = { ...message, params: { ...message.params, protocolVersion: requestVersion } };
      }
      return send(message, options);
    };
  }
  const client = new Client({ name: 'ledger-end2end', version: '1.0.0' }, { capabilities: {} });
  client.onerror = (error) => errors.push(error);
  await client.connect(transport);
  return { client, transport, http, errors };
}

async function healthVersion() {
  const response = await fetch(`${BASE}/healthz`);
  assert.equal(response.status, 200, 'GET /healthz');
  const body = await response.json();
  return body.version;
}

function findPing(tools) {
  const ping = tools.find((t) => t.name === 'ping');
  assert.ok(ping, `tools/list has no ping tool; got: ${tools.map((t) => t.name).join(', ')}`);
  return ping;
}

/** End the session the way a well-behaved client does, and check it is gone. */
async function closeAndCheckSessionEnded({ client, transport, http }, negotiated) {
  const sessionId = transport.sessionId;
  assert.ok(sessionId, 'the server assigned no Mcp-Session-Id on initialize');
  await transport.terminateSession();
  const del = http.filter((x) => x.method === 'DELETE');
  assert.deepEqual(
    del.map((x) => x.status),
    [204],
    'DELETE /mcp with the session id should end the session (204)',
  );
  assert.equal(transport.sessionId, undefined);
  await client.close();

  // A request naming the ended session must now get 404 (Streamable HTTP).
  const after = await fetch(MCP_URL, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': negotiated,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
  });
  assert.equal(after.status, 404, 'a request with an ended Mcp-Session-Id should get 404');
  await after.body?.cancel();
}

test(`SDK client on the SDK's newest version (${LATEST_PROTOCOL_VERSION}): initialize, list, call ping, terminate`, async () => {
  const conn = await connect();
  const { client, transport, http, errors } = conn;

  assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION, 'negotiated protocol version');
  const server = client.getServerVersion();
  assert.equal(server?.name, 'ledger', 'serverInfo.name');
  assert.match(server?.version ?? '', /^\d+\.\d+\.\d+/, 'serverInfo.version');
  assert.equal(server.version, await healthVersion(), 'serverInfo.version matches /healthz');
  assert.ok(client.getServerCapabilities()?.tools, 'the server advertises the tools capability');

  const { tools } = await client.listTools();
  const ping = findPing(tools);
  assert.equal(ping.inputSchema?.type, 'object', 'ping.inputSchema.type');
  assert.ok(ping.outputSchema && typeof ping.outputSchema === 'object', 'ping has an outputSchema');
  assert.equal(ping.outputSchema.type, 'object', 'ping.outputSchema.type');
  assert.equal(ping.annotations?.readOnlyHint, true, 'ping.annotations.readOnlyHint');
  assert.ok(ping.description, 'ping has a description');
  for (const tool of tools) {
    assert.match(tool.name, /^[A-Za-z0-9_.-]{1,128}$/, `tool name ${tool.name}`);
  }

  // The SDK also validates structuredContent against ping's outputSchema here.
  const result = await client.callTool({ name: 'ping', arguments: {} });
  assert.notEqual(result.isError, true, `ping answered isError: ${JSON.stringify(result)}`);
  assert.deepEqual(result.structuredContent, PING_STRUCTURED);
  assert.equal(result.content?.[0]?.type, 'text');
  assert.match(result.content[0].text, /^ok\b/, 'content[0].text starts with ok');
  assert.match(result.content[0].text, /anonymous/, 'content[0].text names the anonymous principal');

  // The SDK opened its optional GET stream; the server has none and said 405.
  const gets = http.filter((x) => x.method === 'GET').map((x) => x.status);
  assert.ok(gets.every((s) => s === 405), `GET /mcp answered ${gets.join(', ')}; expected 405`);

  await closeAndCheckSessionEnded(conn, LATEST_PROTOCOL_VERSION);
  assert.deepEqual(errors.map(String), [], 'the client reported no transport or protocol errors');
});

for (const legacy of ['2025-06-18', '2025-03-26', '2024-11-05']) {
  test(`SDK client asking for legacy version ${legacy}: negotiated, tools work, session ends`, async () => {
    const conn = await connect({ requestVersion: legacy });
    const { client, transport, errors } = conn;

    assert.equal(transport.protocolVersion, legacy, 'the server echoes a supported requested version');
    assert.equal(client.getServerVersion()?.name, 'ledger');

    const { tools } = await client.listTools();
    const ping = findPing(tools);
    assert.equal(ping.inputSchema?.type, 'object');

    const result = await client.callTool({ name: 'ping', arguments: {} });
    assert.notEqual(result.isError, true, `ping answered isError: ${JSON.stringify(result)}`);
    assert.match(result.content?.[0]?.text ?? '', /^ok\b/);
    assert.deepEqual(result.structuredContent, PING_STRUCTURED);
    if (legacy < '2025-06-18') {
      // structuredContent arrived in 2025-06-18: older clients read the JSON as text.
      const texts = result.content.filter((c) => c.type === 'text').map((c) => c.text);
      assert.ok(
        texts.some((t) => {
          try {
            return JSON.stringify(JSON.parse(t)) === JSON.stringify(PING_STRUCTURED);
          } catch {
            return false;
          }
        }),
        `a ${legacy} client should also get the structured result as a JSON text block; got ${JSON.stringify(texts)}`,
      );
    }

    await closeAndCheckSessionEnded(conn, legacy);
    assert.deepEqual(errors.map(String), [], 'the client reported no transport or protocol errors');
  });
}

test('GET /mcp with Accept: text/event-stream is 405 (no server-initiated stream)', async () => {
  const response = await fetch(MCP_URL, { headers: { accept: 'text/event-stream' } });
  await response.body?.cancel();
  assert.equal(response.status, 405);
  const allow = response.headers.get('allow') ?? '';
  assert.match(allow, /\bPOST\b/, `Allow header should name POST; got ${JSON.stringify(allow)}`);
});
