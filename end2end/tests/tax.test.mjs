// The account settings page and the report view's tax choices, in Debian's
// Chromium with JavaScript off (plain forms, post/redirect/get), at 390 px
// (an iPhone 12-15: no page wider than the screen) and at 1280 px.
// Signed in with the test wallet, watching the share suite's seeded wallet;
// the choices stay in USD (us) so no reference rates are fetched: the
// refusals (a method the UK does not accept, Germany in pounds) are checked
// before any rate is needed.
//
//   LEDGER_URL=http://127.0.0.1:PORT SHARE_TOKEN=... node --test tests/tax.test.mjs
//
// Env: as phones.test.mjs (LEDGER_URL, SHARE_TOKEN, LEDGER_E2E_OUT, CHROMIUM).

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { width } from './overflow.mjs';
import { installWallet, testWallet } from './test-wallet.mjs';

const BASE = (process.env.LEDGER_URL ?? '').replace(/\/+$/, '');
const TOKEN = process.env.SHARE_TOKEN ?? '';
if (!BASE || !TOKEN) {
  throw new Error('LEDGER_URL and SHARE_TOKEN must be set; run end2end/run.sh');
}
const OUT = join(process.env.LEDGER_E2E_OUT || join(tmpdir(), 'ledger-e2e'), 'screenshots');
mkdirSync(OUT, { recursive: true });
const WIDTHS = [390, 1280];

let browser;
let signin;
let context;
let page;
let seeded;

before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
});

after(async () => {
  await signin?.close();
  await context?.close();
  await browser?.close();
});

async function fits(p, w, name) {
  await p.screenshot({ path: join(OUT, `tax-${name}-${w}.png`), fullPage: true });
  const { scrollWidth, offenders } = await width(p);
  assert.ok(scrollWidth <= w, `${name} at ${w}px is ${scrollWidth}px wide: ${offenders.join(', ')}`);
}

test('signed in with JavaScript off, watching the seeded wallet', async () => {
  // Sign-In With Solana needs JavaScript: sign in in one context, then
  // carry its cookies into one with JavaScript off.
  signin = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await installWallet(signin, testWallet());
  const p = await signin.newPage();
  const report = await (await fetch(`${BASE}/s/${TOKEN}/report.json`)).json();
  seeded = report.address;
  assert.ok(seeded, 'the share suite seeded a wallet');
  await p.goto(`${BASE}/signin?next=%2Fsettings`);
  await p.click('#siws-button');
  await p.waitForURL(`${BASE}/settings`);
  context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
  await context.addCookies(await signin.cookies());
  page = await context.newPage();
  await page.goto(`${BASE}/wallets`);
  await page.fill('#wallet-address', seeded);
  await page.fill('#wallet-label', 'tax wallet');
  await Promise.all([page.waitForURL(`${BASE}/wallets`), page.click('#add-wallet-form button[type="submit"]')]);
});

test('the settings page refuses in words, saves with a notice, and is linked from the header', async () => {
  await page.goto(`${BASE}/wallets`);
  await Promise.all([page.waitForURL(`${BASE}/settings`), page.click('#settings-link')]);
  for (const w of WIDTHS) {
    await page.setViewportSize({ width: w, height: w === 390 ? 844 : 900 });
    await fits(page, w, 'settings');
  }
  await page.setViewportSize({ width: 390, height: 844 });
  // The UK matches by its share-matching rules: a lot order is refused, beside its field.
  await page.selectOption('#settings-jurisdiction', 'uk');
  await page.selectOption('#settings-method', 'fifo');
  await Promise.all([page.waitForLoadState('load'), page.click('#settings-form button[type="submit"]')]);
  assert.match(await page.innerText('#method-error'), /fifo is not accepted in uk/);
  await fits(page, 390, 'settings-refused');
  // The US with HIFO, numbers as in Germany: saved, back on the page (a GET).
  await page.selectOption('#settings-jurisdiction', 'us');
  await page.selectOption('#settings-method', 'hifo');
  await page.selectOption('#settings-locale', 'de-DE');
  await Promise.all([page.waitForURL(`${BASE}/settings`), page.click('#settings-form button[type="submit"]')]);
  assert.match(await page.innerText('#settings-notice'), /^Saved: United States rules with HIFO/);
  await fits(page, 390, 'settings-saved');
  await page.reload();
  assert.equal(await page.locator('#settings-notice').count(), 0, 'a reload shows the notice no more');
  assert.equal(await page.inputValue('#settings-method'), 'hifo');
});

test('the report view takes jurisdiction, method, currency and tax year, defaults from the settings', async () => {
  for (const w of WIDTHS) {
    await page.setViewportSize({ width: w, height: w === 390 ? 844 : 900 });
    await page.goto(`${BASE}/wallets/${seeded}`);
    const heading = await page.innerText('#tax-heading-line');
    assert.match(heading, /United States: HIFO/, heading);
    assert.match(heading, /from your settings/);
    await fits(page, w, 'report');
    await page.locator('#tax').screenshot({ path: join(OUT, `tax-summary-${w}.png`) });
  }
  // de-DE from the settings: money with a decimal comma.
  const summary = await page.innerText('#tax');
  assert.match(summary, /\d,\d\d USD/, summary.slice(0, 400));
  // The UK refuses HIFO, in words.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.selectOption('#tax-jurisdiction', 'uk');
  await Promise.all([page.waitForLoadState('load'), page.click('#tax-choices button[type="submit"]')]);
  assert.match(page.url(), /jurisdiction=uk/);
  assert.match(await page.innerText('#tax-error'), /hifo is not accepted in uk/);
  await fits(page, 390, 'report-refused');
  await page.locator('#tax').screenshot({ path: join(OUT, 'tax-refused-390.png') });
  // Germany in pounds: refused, the exemption limit is in euros.
  await page.goto(`${BASE}/wallets/${seeded}?jurisdiction=de&currency=GBP`);
  assert.match(await page.innerText('#tax-error'), /EUR only/);
  // The US by FIFO for one tax year: the year list offers the years there are.
  await page.goto(`${BASE}/wallets/${seeded}?jurisdiction=us&method=fifo`);
  const years = await page.locator('#tax-year option').evaluateAll((os) => os.map((o) => o.value));
  assert.equal(years[0], '', 'every year first');
  if (years.length > 1) {
    await page.selectOption('#tax-year', years[1]);
    await Promise.all([page.waitForLoadState('load'), page.click('#tax-choices button[type="submit"]')]);
    assert.match(await page.innerText('#tax'), new RegExp(`Tax year ${years[1]}`));
  }
  await fits(page, 390, 'report-year');
  // The download form carries the choices.
  const hidden = await page.locator('#tax-download input[type="hidden"]').evaluateAll((is) =>
    Object.fromEntries(is.map((i) => [i.name, i.value])),
  );
  assert.equal(hidden.jurisdiction, 'us');
  assert.equal(hidden.currency, 'USD');
});
