/**
 * The `/tpx/status` page in a real headless browser (Debian's `chromium`, driven by `puppeteer-core`):
 * it loads without the proxy token, takes the token from the URL fragment (and drops the fragment),
 * shows the upstream and the exchanges with model, tokens, latency and errors, updates live as new
 * exchanges are served, and runs under its Content-Security-Policy without a single violation.
 */
import { existsSync } from 'node:fs';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { startTpxServe, type TpxServe } from './cli-process.js';
import { UPSTREAM_TOKEN } from './serve-support.js';

const CHROMIUM = process.env['TPX_CHROMIUM'] ?? '/usr/bin/chromium';
const PROXY_TOKEN = 'proxy-token-browser-81d4';
const SCREENSHOT = '/tmp/tpx-status.png';

let mock: MockModelServer;
let serve: TpxServe;
let browser: Browser;
beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium (or set TPX_CHROMIUM)`);
  }
  mock = await startMockModel({
    token: UPSTREAM_TOKEN,
    script: { replies: [{ error: { status: 503 } }] },
  });
  serve = await startTpxServe(['--max-retries', '0'], {
    TPX_OAUTH_TOKEN: UPSTREAM_TOKEN,
    TPX_BASE_URL: mock.url,
    TPX_PROXY_TOKEN: PROXY_TOKEN,
  });
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await mock?.close();
});

function post(model: string, content: string): Promise<number> {
  return fetch(`${serve.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${PROXY_TOKEN}` },
    body: JSON.stringify({ model, max_tokens: 32, messages: [{ role: 'user', content }] }),
  }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });
}

describe('the /tpx/status page in a browser', () => {
  it('shows the upstream and the exchanges, updates live, and needs the token only for its data', async () => {
    // An overloaded upstream (503) reaches the caller as 529 overloaded_error.
    expect(await post('claude-failing', 'this one fails')).toBe(529);
    expect(await post('claude-sonnet-4-5', 'Hello there')).toBe(200);

    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    await page.setViewport({ width: 1280, height: 640 });

    // Without the token, the page loads and asks for it.
    await page.goto(`${serve.url}/tpx/status`, { waitUntil: 'load' });
    await page.waitForSelector('#auth.shown', { timeout: 5_000 });
    expect(await page.$eval('#state', (element) => element.textContent)).toContain('needs its token');

    // With the token in the fragment: the data, and the fragment gone from the address bar.
    await page.goto(`${serve.url}/tpx/status#token=${PROXY_TOKEN}`, { waitUntil: 'load' });
    await page.waitForFunction("document.querySelectorAll('#exchanges tbody tr').length === 2", {
      timeout: 5_000,
    });
    expect(page.url()).toBe(`${serve.url}/tpx/status`);
    const rows = () =>
      page.$$eval('#exchanges tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      );
    const [latest, failed] = await rows();
    expect(latest![1]).toBe('200');
    expect(latest![2]).toBe('default');
    expect(latest![3]).toMatch(/^claude-sonnet-4-5/);
    expect(latest![4]).toMatch(/^\d+ → \d+$/);
    expect(Number(latest![6])).toBeGreaterThanOrEqual(0);
    expect(failed![1]).toBe('529');
    expect(failed![7]).toMatch(/^MODEL_EHTTP: /);
    const upstreams = await page.$$eval('#upstreams tbody tr td', (tds) => tds.map((td) => td.textContent));
    expect(upstreams).toEqual(['default', 'tpx', mock.url, '—']);

    // Live: a new exchange appears without a reload.
    expect(await post('claude-haiku-4-5', 'One more')).toBe(200);
    await page.waitForFunction("document.querySelectorAll('#exchanges tbody tr').length === 3", {
      timeout: 5_000,
    });
    expect((await rows())[0]![3]).toMatch(/^claude-haiku-4-5/);

    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    // Under the page's CSP nothing was blocked and no script failed (a 401 before the token is expected).
    expect(problems.filter((text) => !text.includes('401'))).toEqual([]);
    await page.close();
  });
});
