// Accounts in Debian's Chromium, driven by playwright-core: sign in with a
// test wallet, mint an MCP token and use it from the official MCP SDK, add a
// wallet, revoke the token, sign in with Google against the OIDC stand-in.
//
//   LEDGER_URL=http://127.0.0.1:PORT node --test tests/accounts.test.mjs
//
// Env:
//   LEDGER_URL      base URL of a running server whose Google settings point
//                   at the OIDC stand-in (run.sh starts both)
//   LEDGER_E2E_OUT  where screenshots go (run.sh: its run directory)
//   CHROMIUM        browser binary (default /usr/bin/chromium)
//
// The wallet is injected as `window.solana` (what Phantom, Solflare and
// Backpack provide): its `signMessage` signs with an ed25519 key held by
// this Node process (`page.exposeFunction`), so the page signs exactly as a
// wallet would and the server checks a real signature.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';

import { base58, installWallet, testWallet } from './test-wallet.mjs';

const BASE = (process.env.LEDGER_URL ?? '').replace(/\/+$/, '');
if (!BASE) {
  throw new Error('LEDGER_URL is not set (e.g. http://127.0.0.1:3000); run end2end/run.sh');
}
const MCP_URL = `${BASE}/mcp`;
const OUT = join(process.env.LEDGER_E2E_OUT || join(tmpdir(), 'ledger-e2e'), 'screenshots');
mkdirSync(OUT, { recursive: true });
const GOOGLE_EMAIL = 'tester@example.com';

let browser;
const wallet = testWallet();
// What the steps below hand each other.
const state = { accountId: null, token: null, context: null, page: null };

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

after(async () => {
  await state.context?.close();
  await browser?.close();
});

async function screenshot(page, name) {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

/** Screenshots of the current page at a phone's and a desktop's width; the nav on one line. */
async function screenshotsAt(page, name) {
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await screenshot(page, `${name}-${width}`);
    const layout = await page.evaluate(() => {
      const header = document.querySelector('.site-header');
      const items = [header.querySelector('.brand'), ...header.querySelectorAll('nav a, nav button')]
        .filter((el) => el.getClientRects().length > 0);
      const boxes = items.map((el) => el.getBoundingClientRect());
      return {
        scrollWidth: document.documentElement.scrollWidth,
        innerWidth,
        oneLine: boxes.every((a) => boxes.every((b) => {
          const middle = (a.top + a.bottom) / 2;
          return middle >= b.top && middle <= b.bottom;
        })),
      };
    });
    assert.ok(layout.oneLine, `${name} at ${width}px: the nav sits on one line`);
    assert.ok(layout.scrollWidth <= layout.innerWidth, `${name} at ${width}px is ${layout.scrollWidth}px wide`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

/** An MCP SDK client with a bearer token. */
async function mcpClient(token) {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'ledger-end2end-accounts', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

test('a wallet signs in on /signin (Sign-In With Solana)', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  state.context = context;
  await installWallet(context, wallet);
  const page = await context.newPage();
  state.page = page;
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  // The verify answer, read on its way to the page (which navigates away).
  let verified;
  await page.route('**/auth/solana/verify', async (route) => {
    const response = await route.fetch();
    verified = { status: response.status(), body: await response.json() };
    await route.fulfill({ response });
  });
  await page.goto(`${BASE}/signin`);
  await page.click('#siws-button');
  // A sign-in without `next` lands on the wallets.
  await page.waitForURL(`${BASE}/wallets`);
  assert.equal(verified?.status, 200, 'verify answers 200');
  const body = verified.body;
  assert.match(body.account_id, /^acct_/);
  state.accountId = body.account_id;
  assert.ok(await page.isVisible('form.signout button'), 'the nav offers Sign out');
  const cookies = await context.cookies(BASE);
  const session = cookies.find((c) => c.name === 'ledger_session');
  assert.ok(session, 'a session cookie');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Lax');
  assert.deepEqual(errors, []);
});

test('an MCP token is minted, shown exactly once, and answers ping as the account', async () => {
  const { page } = state;
  assert.ok(page, 'signed in by the previous test');
  await page.goto(`${BASE}/keys`);
  await page.check('input[name="kind"][value="mcp"]');
  await page.check('input[name="scope_read"]');
  await page.fill('#mint-label', 'end2end agent');
  await Promise.all([page.waitForLoadState('load'), page.click('#mint-form button[type="submit"]')]);
  const token = (await page.textContent('#minted pre code')).trim();
  assert.match(token, /^lm_[1-9A-HJ-NP-Za-km-z]{30,}$/);
  state.token = token;
  const html = await page.content();
  assert.ok(html.includes(`claude mcp add --transport http ledger ${MCP_URL}`), 'the Claude Code line');
  assert.ok(html.includes(`Authorization: Bearer ${token}`), 'the snippets carry the token');
  assert.ok(await page.isVisible('#minted button.copy'), 'the copy button shows once the script runs');
  await screenshotsAt(page, 'keys-minted');

  await page.goto(`${BASE}/keys`);
  const list = await page.content();
  assert.ok(!list.includes(token), 'the plaintext is never shown again');
  assert.ok(list.includes(token.slice(0, 10)), 'the token is listed by its prefix');
  assert.ok(list.includes('end2end agent'));
  assert.ok(list.includes('OAuth clients'));
  await screenshotsAt(page, 'keys');

  const client = await mcpClient(token);
  try {
    const result = await client.callTool({ name: 'ping', arguments: {} });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.deepEqual(result.structuredContent.principal, {
      kind: 'account',
      account_id: state.accountId,
      credential: 'mcp_token',
      scopes: ['read'],
    });
  } finally {
    await client.close();
  }
});

test('a wallet is added on the Wallets page', async () => {
  const { page } = state;
  const address = base58(randomBytes(32));
  await page.goto(`${BASE}/wallets`);
  await page.fill('#wallet-address', address);
  await page.fill('#wallet-label', 'cold storage');
  await Promise.all([page.waitForURL(`${BASE}/wallets`), page.click('#add-wallet-form button[type="submit"]')]);
  const card = page.locator(`#wallet-${address}`);
  assert.ok(await card.isVisible(), 'the wallet is listed');
  assert.match(await card.innerText(), /cold storage[\s\S]*never scanned[\s\S]*0 legs/);
  // Bad input: the page again, the error next to the field.
  await page.fill('#wallet-address', 'not-a-wallet');
  await Promise.all([page.waitForLoadState('load'), page.click('#add-wallet-form button[type="submit"]')]);
  assert.ok(await page.isVisible('#address-error'), 'the address error is shown');
  await page.goto(`${BASE}/wallets`);
  await screenshotsAt(page, 'wallets');
});

test('a revoked token is refused: the client gets 401', async () => {
  const { page, token } = state;
  assert.ok(token, 'minted by an earlier test');
  await page.goto(`${BASE}/keys`);
  // Revoking asks first, on a page naming the token.
  await Promise.all([page.waitForURL(/\/keys\/revoke\?token_id=/), page.click('table.tokens a.danger')]);
  assert.match(await page.textContent('#confirm-question'), /^Revoke MCP token `end2end agent` \(created .+\)\?$/);
  assert.equal((await page.textContent('#confirm-button')).trim(), 'Revoke end2end agent');
  await Promise.all([page.waitForURL(`${BASE}/keys`), page.click('#confirm-button')]);
  assert.ok(await page.isVisible('text=No live tokens yet.'), 'the list is empty');
  assert.ok(await page.isVisible('#notice'), 'what happened is said');
  await assert.rejects(mcpClient(token), (err) => {
    assert.equal(err?.code, 401, String(err?.message ?? err));
    assert.match(String(err.message), /unauthenticated/);
    return true;
  });
});

test('signing out ends the session', async () => {
  const { page } = state;
  await page.goto(`${BASE}/keys`);
  await Promise.all([page.waitForURL(`${BASE}/`), page.click('form.signout button')]);
  await page.goto(`${BASE}/keys`);
  assert.equal(new URL(page.url()).pathname, '/signin', 'signed out: sent to /signin');
});

test('Google signs in against the OIDC stand-in, with JavaScript off', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(`${BASE}/signin`);
    await Promise.all([page.waitForURL(`${BASE}/wallets`), page.click('#google-signin')]);
    assert.ok(await page.isVisible('form.signout button'), 'signed in');
    await page.goto(`${BASE}/signin`);
    assert.ok((await page.content()).includes(`Google account ${GOOGLE_EMAIL}`), 'the identity is listed');
    await screenshotsAt(page, 'signin-google');
  } finally {
    await context.close();
  }
});
