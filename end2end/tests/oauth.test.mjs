// Connect with OAuth, as an MCP host does it: the official MCP TypeScript SDK
// client with its own OAuth machinery (auth.js, unmodified), driven by an
// in-memory OAuthClientProvider, against the URL that refuses anonymous
// callers. Chromium (playwright-core) plays the person: it signs in with a
// test wallet and approves or denies on the consent page.
//
//   LEDGER_URL=http://127.0.0.1:PORT node --test tests/oauth.test.mjs
//
// Env:
//   LEDGER_URL             base URL of a running server
//   LEDGER_E2E_OUT         where screenshots go (run.sh: its run directory)
//   LEDGER_E2E_CIMD_PORT   the https port run.sh serves Client ID Metadata
//                          Documents on (self-signed; the server's test-only
//                          metadata_allow_loopback accepts it on loopback)
//   LEDGER_E2E_CIMD_DIR    the directory those documents are written to
//   CHROMIUM               browser binary (default /usr/bin/chromium)
//
// The server runs with a short access-token lifetime (run.sh sets it), so the
// refresh step waits for a real expiry instead of faking one.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';

import { installWallet, testWallet } from './test-wallet.mjs';

const BASE = (process.env.LEDGER_URL ?? '').replace(/\/+$/, '');
if (!BASE) {
  throw new Error('LEDGER_URL is not set (e.g. http://127.0.0.1:3000); run end2end/run.sh');
}
// The endpoint OAuth hosts are pointed at: /mcp itself answers anonymous callers.
const ACCOUNT_MCP = `${BASE}/mcp/account`;
const OUT = join(process.env.LEDGER_E2E_OUT || join(tmpdir(), 'ledger-e2e'), 'screenshots');
mkdirSync(OUT, { recursive: true });

/**
 * The loopback redirect target a native host (Claude Code, mcp-remote) opens:
 * `http://localhost:PORT/callback`. Each request's query is handed to whoever
 * awaits `next()`.
 */
async function callbackServer() {
  const waiting = [];
  const arrived = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    const query = Object.fromEntries(url.searchParams);
    const w = waiting.shift();
    if (w) w(query);
    else arrived.push(query);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  return {
    redirectUrl: `http://localhost:${port}/callback`,
    next: () => (arrived.length ? Promise.resolve(arrived.shift()) : new Promise((r) => waiting.push(r))),
    close: () => new Promise((r) => server.close(r)),
  };
}

/** An in-memory OAuthClientProvider: what a host keeps in its keychain. */
class MemoryProvider {
  constructor(redirectUrl, { clientMetadataUrl, name = 'Ledger end2end host' } = {}) {
    this._redirectUrl = redirectUrl;
    this.clientMetadataUrl = clientMetadataUrl;
    this._name = name;
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._discovery = undefined;
    this.authorizationUrl = undefined;
    this.savedTokens = [];
    this.expectedState = `st-${Math.random().toString(36).slice(2)}`;
  }
  get redirectUrl() {
    return this._redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: this._name,
      redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return this.expectedState;
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(info) {
    this._client = info;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
    this.savedTokens.push({ ...tokens, savedAt: Date.now() });
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    return this._verifier;
  }
  saveDiscoveryState(s) {
    this._discovery = s;
  }
  discoveryState() {
    return this._discovery;
  }
}

function transportFor(provider) {
  return new StreamableHTTPClientTransport(new URL(ACCOUNT_MCP), { authProvider: provider });
}

/** connect(): the first attempt must stop at the browser step (UnauthorizedError). */
async function connectUntilBrowser(provider) {
  const client = new Client({ name: 'ledger-end2end-oauth', version: '1.0.0' }, { capabilities: {} });
  await assert.rejects(client.connect(transportFor(provider)), UnauthorizedError);
  assert.ok(provider.authorizationUrl, 'the SDK opened /authorize');
  return provider.authorizationUrl;
}

async function connected(provider) {
  const client = new Client({ name: 'ledger-end2end-oauth', version: '1.0.0' }, { capabilities: {} });
  const transport = transportFor(provider);
  await client.connect(transport);
  return client;
}

let browser;
let context;
let page;
let callbacks;
const wallet = testWallet();
let accountId;

before(async () => {
  callbacks = await callbackServer();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await installWallet(context, wallet);
  page = await context.newPage();
});

after(async () => {
  await context?.close();
  await browser?.close();
  await callbacks?.close();
});

/** Follow /authorize in the browser to the consent page, signing in on the way if asked. */
async function toConsent(authorizationUrl) {
  await page.goto(String(authorizationUrl));
  if (new URL(page.url()).pathname === '/signin') {
    await page.click('#siws-button');
    await page.waitForURL((u) => new URL(u).pathname === '/authorize');
  }
  await page.waitForSelector('#oauth-approve');
}

test('a bare request to the OAuth endpoint is a 401 that names its protected-resource metadata', async () => {
  const response = await fetch(ACCOUNT_MCP, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    }),
  });
  assert.equal(response.status, 401);
  const challenge = response.headers.get('www-authenticate') ?? '';
  assert.match(challenge, /^Bearer /);
  assert.ok(
    challenge.includes(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp/account"`),
    challenge,
  );
  const prm = await (await fetch(`${BASE}/.well-known/oauth-protected-resource/mcp/account`)).json();
  assert.equal(prm.resource, ACCOUNT_MCP);
  assert.deepEqual(prm.authorization_servers, [BASE]);
});

test('the SDK discovers, registers, and a person signs in and approves in Chromium', async () => {
  const provider = new MemoryProvider(callbacks.redirectUrl);
  const authorizationUrl = await connectUntilBrowser(provider);
  assert.equal(authorizationUrl.origin + authorizationUrl.pathname, `${BASE}/authorize`);
  assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authorizationUrl.searchParams.get('resource'), ACCOUNT_MCP);
  assert.match(provider.clientInformation().client_id, /\S/, 'registered dynamically');

  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await toConsent(authorizationUrl);
  const consent = await page.content();
  assert.ok(consent.includes('Ledger end2end host'), 'the consent page names the client');
  assert.ok(consent.includes(callbacks.redirectUrl), 'and where it sends you back');
  assert.ok(consent.includes(wallet.address), 'and the identity it acts for');
  await page.screenshot({ path: join(OUT, 'oauth-consent.png'), fullPage: true });

  const arrived = callbacks.next();
  await page.click('#oauth-approve');
  const query = await arrived;
  assert.equal(query.state, provider.expectedState, 'state is echoed');
  assert.equal(query.iss, BASE, 'iss names the issuer (RFC 9207)');
  assert.ok(query.code, JSON.stringify(query));

  const transport = transportFor(provider);
  await transport.finishAuth(query.code);
  const tokens = provider.tokens();
  assert.equal(tokens.token_type.toLowerCase(), 'bearer');
  assert.ok(tokens.refresh_token, 'a refresh token');
  assert.ok(tokens.expires_in > 0);

  const client = await connected(provider);
  try {
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === 'ping'));
    const ping = await client.callTool({ name: 'ping', arguments: {} });
    assert.notEqual(ping.isError, true, JSON.stringify(ping));
    assert.equal(ping.structuredContent.principal.kind, 'account', JSON.stringify(ping.structuredContent));
    accountId = ping.structuredContent.principal.account_id;
    assert.match(accountId, /^acct_/);

    // Wait out the access token (run.sh gives it a few seconds): the SDK
    // gets a 401 invalid_token, refreshes with the refresh token, retries.
    const waitMs = (tokens.expires_in + 1) * 1000;
    assert.ok(waitMs <= 30_000, `the e2e server's access tokens live ${tokens.expires_in} s`);
    await new Promise((r) => setTimeout(r, waitMs));
    const again = await client.callTool({ name: 'ping', arguments: {} });
    assert.notEqual(again.isError, true, JSON.stringify(again));
    assert.equal(again.structuredContent.principal.account_id, accountId);
    const now = provider.tokens();
    assert.notEqual(now.access_token, tokens.access_token, 'a new access token');
    assert.notEqual(now.refresh_token, tokens.refresh_token, 'the refresh token rotated');
  } finally {
    await client.close();
  }
  assert.deepEqual(errors, []);

  // The Keys page lists the connected client.
  await page.goto(`${BASE}/keys`);
  const keys = await page.content();
  assert.ok(keys.includes('Ledger end2end host'), 'the Keys page lists the connected client');
  await page.screenshot({ path: join(OUT, 'oauth-keys-connected.png'), fullPage: true });
});

test('a Client ID Metadata Document on loopback stands in for registration', async (t) => {
  const port = process.env.LEDGER_E2E_CIMD_PORT;
  const dir = process.env.LEDGER_E2E_CIMD_DIR;
  assert.ok(port && dir, 'run.sh serves Client ID Metadata Documents (LEDGER_E2E_CIMD_PORT/_DIR)');
  const clientId = `https://localhost:${port}/clients/e2e.json`;
  const provider = new MemoryProvider(callbacks.redirectUrl, {
    clientMetadataUrl: clientId,
    name: 'Metadata document host',
  });
  writeFileSync(
    join(dir, 'e2e.json'),
    JSON.stringify({ client_id: clientId, ...provider.clientMetadata }),
  );
  const authorizationUrl = await connectUntilBrowser(provider);
  assert.equal(authorizationUrl.searchParams.get('client_id'), clientId, 'no registration: the URL is the id');
  await toConsent(authorizationUrl);
  const consent = await page.content();
  assert.ok(consent.includes('Metadata document host'));
  assert.ok(consent.includes(`localhost:${port}`), 'the consent page says which host the client comes from');
  await page.screenshot({ path: join(OUT, 'oauth-consent-cimd.png'), fullPage: true });
  const arrived = callbacks.next();
  await page.click('#oauth-approve');
  const query = await arrived;
  assert.equal(query.state, provider.expectedState);
  await transportFor(provider).finishAuth(query.code);
  const client = await connected(provider);
  try {
    const ping = await client.callTool({ name: 'ping', arguments: {} });
    assert.equal(ping.structuredContent.principal.account_id, accountId);
  } finally {
    await client.close();
  }
  t.diagnostic(`client_id ${clientId}`);
});

test('a denied consent sends access_denied and leaves the client without a token', async () => {
  const provider = new MemoryProvider(callbacks.redirectUrl, { name: 'Host to be denied' });
  const authorizationUrl = await connectUntilBrowser(provider);
  await toConsent(authorizationUrl);
  const arrived = callbacks.next();
  await page.click('#oauth-deny');
  const query = await arrived;
  assert.equal(query.error, 'access_denied');
  assert.equal(query.state, provider.expectedState);
  assert.equal(query.code, undefined);
  assert.equal(query.iss, BASE);
  assert.equal(provider.tokens(), undefined, 'no token');
  // Still nothing without a token: the next attempt stops at the browser again.
  provider.authorizationUrl = undefined;
  await connectUntilBrowser(provider);
});
