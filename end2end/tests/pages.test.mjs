// The portal pages in Debian's Chromium, driven by playwright-core.
//
//   LEDGER_URL=http://127.0.0.1:PORT node --test tests/pages.test.mjs
//
// Env:
//   LEDGER_URL                 base URL of a running server (run.sh sets it)
//   LEDGER_E2E_OUT             where screenshots go (run.sh: its run directory)
//   CHROMIUM                   browser binary (default /usr/bin/chromium)
//   LEDGER_REQUIRE_HYDRATION=1 fail, rather than skip, when the pages carry no
//                              hydration scripts (a server built without the
//                              wasm bundle)
//
// Pages are server-rendered and must work with JavaScript off. With the wasm
// bundle built into the server they hydrate, and each `figure.snippet` gets a
// `button.copy` whose text becomes "Copied" when clicked.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

const BASE = (process.env.LEDGER_URL ?? '').replace(/\/+$/, '');
if (!BASE) {
  throw new Error('LEDGER_URL is not set (e.g. http://127.0.0.1:3000); run end2end/run.sh');
}
const MCP_URL = `${BASE}/mcp`;
const OUT = join(process.env.LEDGER_E2E_OUT || join(tmpdir(), 'ledger-e2e'), 'screenshots');
mkdirSync(OUT, { recursive: true });
const REQUIRE_HYDRATION = process.env.LEDGER_REQUIRE_HYDRATION === '1';
const CLIENTS = ['claude-code', 'cursor', 'claude-desktop', 'curl'];

let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  });
});

after(async () => {
  await browser?.close();
});

/** Open `path` in a fresh context; collect console errors, page errors and failed loads. */
async function open(path, { javaScriptEnabled, width = 1280 }) {
  const context = await browser.newContext({
    javaScriptEnabled,
    viewport: { width, height: 900 },
  });
  if (javaScriptEnabled) {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  }
  const page = await context.newPage();
  const problems = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) =>
    problems.push(`request failed: ${req.method()} ${req.url()} (${req.failure()?.errorText})`),
  );
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });
  const response = await page.goto(`${BASE}${path}`, { waitUntil: 'load' });
  assert.equal(response?.status(), 200, `GET ${path}`);
  if (javaScriptEnabled) {
    await page.waitForLoadState('networkidle');
  }
  return { context, page, problems };
}

async function screenshot(page, name) {
  await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
}

/** The tools `tools/list` names, asked over the stateless (2026-07-28) wire. */
async function registryToolNames() {
  const version = '2026-07-28';
  const response = await fetch(MCP_URL, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      'mcp-method': 'tools/list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': version,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'ledger-end2end', version: '1.0.0' },
        },
      },
    }),
  });
  assert.equal(response.status, 200, 'tools/list over 2026-07-28');
  const body = await response.json();
  assert.ok(Array.isArray(body.result?.tools), `tools/list answered ${JSON.stringify(body)}`);
  return body.result.tools.map((t) => t.name);
}

async function pageHasHydrationScripts() {
  const html = await (await fetch(`${BASE}/`)).text();
  return html.includes('/pkg/ledger.js');
}

test('home page without JavaScript: the four client snippets carry the real MCP URL', async () => {
  const { context, page } = await open('/', { javaScriptEnabled: false });
  try {
    await screenshot(page, 'home-nojs');
    for (const id of CLIENTS) {
      const section = page.locator(`#${id}`);
      assert.equal(await section.count(), 1, `#${id} is on the page`);
      assert.ok(await section.isVisible(), `#${id} is visible`);
      const text = await section.innerText();
      assert.ok(text.includes(MCP_URL), `#${id} should contain ${MCP_URL}; it reads:\n${text}`);
      assert.ok(
        (await section.locator('figure.snippet').count()) >= 1,
        `#${id} holds a figure.snippet`,
      );
    }
    // Nothing on the page points at another MCP endpoint (e.g. a default host).
    const body = await page.locator('body').innerText();
    const urls = body.match(/https?:\/\/[^\s"'`]+\/mcp\b/g) ?? [];
    assert.deepEqual([...new Set(urls)], [MCP_URL], 'every MCP URL on the page is this server');
    // A copy button only makes sense once hydrated; none may be served dead.
    assert.equal(
      await page.locator('button.copy').count(),
      0,
      'no button.copy without JavaScript (it would do nothing)',
    );
  } finally {
    await context.close();
  }
});

test('tools page without JavaScript: lists ping and every registry tool', async () => {
  const names = await registryToolNames();
  assert.ok(names.includes('ping'), `tools/list names ping (got ${names.join(', ')})`);
  const { context, page } = await open('/tools', { javaScriptEnabled: false });
  try {
    await screenshot(page, 'tools-nojs');
    const ping = page.locator('article#tool-ping');
    assert.equal(await ping.count(), 1, 'article#tool-ping is on the page');
    assert.ok(await ping.isVisible(), 'article#tool-ping is visible');
    assert.match(await ping.innerText(), /\bping\b/);
    for (const name of names) {
      assert.equal(
        await page.locator(`article#tool-${name}`).count(),
        1,
        `the tools page has article#tool-${name} for a tool tools/list offers`,
      );
    }
    assert.equal(
      await page.locator('article[id^="tool-"]').count(),
      names.length,
      'the tools page lists exactly the tools of tools/list',
    );
  } finally {
    await context.close();
  }
});

test('the curl snippet from the home page, run as shown, gets ping\'s result', async (t) => {
  if (spawnSync('curl', ['--version']).status !== 0) {
    t.skip('curl is not installed');
    return;
  }
  const { context, page } = await open('/', { javaScriptEnabled: false });
  let script;
  try {
    script = await page.locator('#curl pre').first().innerText();
  } finally {
    await context.close();
  }
  const run = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(run.status, 0, `the snippet failed:\n${script}\n${run.stderr}`);
  const text = run.stdout.replace(/^(event|data): ?/gm, '');
  const body = JSON.parse(text.trim());
  assert.equal(body.error, undefined, `the snippet got an error: ${run.stdout}`);
  assert.deepEqual(body.result?.structuredContent, {
    ok: true,
    principal: { kind: 'anonymous' },
    payments: { mode: 'off' },
  });
});

// A phone (390 px, an iPhone 12-15) and a desktop. What a person would see
// as broken: the page scrolling sideways, the nav folding onto a second
// line, a code block's line running off its card, the version dangling
// above the footer.
for (const width of [390, 1280]) {
  test(`at ${width} px: nothing wider than the screen, a one-line nav, code blocks whole`, async () => {
    for (const [path, name] of [
      ['/', 'home'],
      ['/tools', 'tools'],
    ]) {
      const { context, page } = await open(path, { javaScriptEnabled: false, width });
      try {
        await screenshot(page, `${name}-${width}`);
        const layout = await page.evaluate(() => {
          const header = document.querySelector('.site-header');
          // What is shown: on a phone the developer links move to the footer.
          const items = [header.querySelector('.brand'), ...header.querySelectorAll('nav a, nav button')]
            .filter((el) => el.getClientRects().length > 0);
          const tops = items.map((el) => el.getBoundingClientRect());
          const pres = [...document.querySelectorAll('pre')].map((pre) => {
            const box = pre.getBoundingClientRect();
            const style = getComputedStyle(pre);
            return {
              text: pre.innerText.slice(0, 60),
              hidden: pre.scrollWidth - pre.clientWidth,
              scrolls: ['auto', 'scroll'].includes(style.overflowX),
              wraps: ['pre-wrap', 'break-spaces', 'pre-line'].includes(style.whiteSpace),
              right: box.right,
            };
          });
          const main = document.querySelector('main').innerText;
          return {
            scrollWidth: document.documentElement.scrollWidth,
            innerWidth,
            // Every header item's vertical middle lies within every other's box: one line.
            oneLine: tops.every((a) => tops.every((b) => {
              const middle = (a.top + a.bottom) / 2;
              return middle >= b.top && middle <= b.bottom;
            })),
            pres,
            versionInMain: /Ledger \d+\.\d+\.\d+/.test(main),
            footer: document.querySelector('.site-footer').innerText,
          };
        });
        assert.ok(
          layout.scrollWidth <= layout.innerWidth,
          `${path} at ${width}px is ${layout.scrollWidth}px wide: something runs past the screen`,
        );
        assert.ok(layout.oneLine, `${path} at ${width}px: the brand and nav links sit on one line`);
        for (const pre of layout.pres) {
          assert.ok(pre.wraps || pre.scrolls, `a code block neither wraps nor scrolls: ${pre.text}`);
          assert.ok(pre.hidden <= 0 || pre.scrolls, `a code block hides ${pre.hidden}px: ${pre.text}`);
          assert.ok(pre.right <= width, `a code block runs off the screen: ${pre.text}`);
        }
        assert.equal(layout.versionInMain, false, `${path}: no stray "Ledger x.y.z" above the footer`);
        assert.match(layout.footer, /version \d+\.\d+\.\d+/, 'the version is in the footer');
      } finally {
        await context.close();
      }
    }
  });
}

test('home page: the Claude Desktop snippet is the guide\'s (http-only, no space inside an argument)', async () => {
  const { context, page } = await open('/', { javaScriptEnabled: false });
  try {
    const config = JSON.parse(await page.locator('#claude-desktop pre').innerText());
    const server = config.mcpServers.ledger;
    assert.equal(server.command, 'npx');
    assert.deepEqual(server.args, [
      'mcp-remote',
      MCP_URL,
      '--transport',
      'http-only',
      '--header',
      'Authorization:${LEDGER_AUTH}',
    ]);
    for (const arg of server.args) assert.ok(!arg.includes(' '), `no space inside ${arg}`);
    assert.deepEqual(server.env, { LEDGER_AUTH: 'Bearer lm_...' });
  } finally {
    await context.close();
  }
});

test('tools page: free tools, then paid, then account; each card shows its price', async () => {
  const { context, page } = await open('/tools', { javaScriptEnabled: false });
  try {
    const groups = await page.evaluate(() =>
      [...document.querySelectorAll('section.tool-group')].map((section) => ({
        id: section.id,
        tools: [...section.querySelectorAll('article.tool')].map((a) => ({
          name: a.id.replace(/^tool-/, ''),
          tier: a.querySelector('.tier')?.innerText ?? '',
          price: a.querySelector('.price')?.innerText ?? '',
        })),
      })),
    );
    const order = groups.map((g) => g.id);
    assert.deepEqual(
      order,
      ['group-free', 'group-paid', 'group-account'].filter((id) => order.includes(id)),
      'groups in the order a user meets them',
    );
    assert.ok(order.includes('group-free') && order.includes('group-paid'), order.join(', '));
    const inGroups = groups.flatMap((g) => g.tools).length;
    assert.equal(inGroups, await page.locator('article.tool').count(), 'every tool is in a group');
    for (const group of groups) {
      for (const tool of group.tools) {
        assert.match(tool.price, /^Price: \S/, `${tool.name} shows a price`);
        if (group.id === 'group-paid') {
          assert.match(tool.tier, /^paid/, `${tool.name} under paid is paid`);
          assert.match(tool.price, /\$\d+\.\d\d/, `${tool.name}'s price names dollars`);
        } else {
          assert.doesNotMatch(tool.tier, /^paid/, `${tool.name} under ${group.id} is not paid`);
        }
      }
    }
    const free = groups.find((g) => g.id === 'group-free').tools.map((t) => t.name);
    assert.equal(free[0], 'ping', 'the first tool a user meets is ping');
  } finally {
    await context.close();
  }
});

test('pages with JavaScript: no console errors, page errors or failed loads', async () => {
  const seen = [];
  for (const [path, name] of [
    ['/', 'home-js'],
    ['/tools', 'tools-js'],
  ]) {
    const { context, page, problems } = await open(path, { javaScriptEnabled: true });
    try {
      await screenshot(page, name);
      // Still the server-rendered content, JS or not.
      if (path === '/') {
        for (const id of CLIENTS) {
          assert.ok((await page.locator(`#${id}`).innerText()).includes(MCP_URL), `#${id}`);
        }
      } else {
        assert.equal(await page.locator('article#tool-ping').count(), 1);
      }
      seen.push(...problems.map((p) => `${path}: ${p}`));
    } finally {
      await context.close();
    }
  }
  assert.deepEqual(seen, [], 'no console errors');
});

test('hydration: a button.copy in each snippet, and clicking it shows "Copied"', async (t) => {
  if (!(await pageHasHydrationScripts())) {
    const why =
      'the home page has no hydration scripts (/pkg/ledger.js): the server was built without ' +
      'the wasm bundle (public/pkg/ledger.js + ledger_bg.wasm)';
    if (REQUIRE_HYDRATION) assert.fail(`${why}, and LEDGER_REQUIRE_HYDRATION=1`);
    t.skip(`${why}; set LEDGER_REQUIRE_HYDRATION=1 to make this fail`);
    return;
  }
  const { context, page, problems } = await open('/', { javaScriptEnabled: true });
  try {
    const snippets = page.locator('figure.snippet');
    const count = await snippets.count();
    assert.ok(count >= CLIENTS.length, `at least ${CLIENTS.length} snippets (got ${count})`);
    await page
      .locator('figure.snippet button.copy')
      .nth(count - 1)
      .waitFor({ state: 'visible', timeout: 15_000 })
      .catch(() => {});
    for (let i = 0; i < count; i++) {
      assert.equal(
        await snippets.nth(i).locator('button.copy').count(),
        1,
        `figure.snippet #${i + 1} has one button.copy after hydration`,
      );
    }
    const button = snippets.first().locator('button.copy');
    await button.click();
    await page.waitForFunction(
      (el) => el.textContent.trim() === 'Copied',
      await button.elementHandle(),
      { timeout: 5_000 },
    ).catch(() => {});
    assert.equal((await button.innerText()).trim(), 'Copied', 'the clicked button reads "Copied"');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    const shown = await snippets.first().locator('pre').innerText();
    assert.equal(copied.trim(), shown.trim(), 'the clipboard holds the snippet as shown');
    await screenshot(page, 'home-hydrated-copied');
    assert.deepEqual(problems, [], 'no console errors while hydrating and copying');
  } finally {
    await context.close();
  }
});
