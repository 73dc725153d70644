import { describe, expect, it } from 'vitest';
import { CATALOG_FRESH_MS, CATALOG_RETRY_MS, createUpstreamCatalog } from './upstream-catalog.js';
import type { UpstreamReport } from './types.js';

const report = (id: string): UpstreamReport => ({
  modelsUrl: 'http://127.0.0.1:8000/v1/models',
  modelsStatus: 200,
  modelsContentType: 'application/json',
  models: [{ id }],
});

/** A catalog over a scripted inspection and a clock the test moves. */
function catalogWith(answers: (() => Promise<UpstreamReport>)[]) {
  let clock = 1_000;
  let calls = 0;
  const catalog = createUpstreamCatalog(
    () => {
      const answer = answers[Math.min(calls, answers.length - 1)]!;
      calls++;
      return answer();
    },
    () => clock,
  );
  return {
    catalog,
    calls: () => calls,
    advance(ms: number) {
      clock += ms;
    },
  };
}

describe('createUpstreamCatalog', () => {
  it('keeps a successful inspection for five minutes, then asks again', async () => {
    expect([CATALOG_FRESH_MS, CATALOG_RETRY_MS]).toStrictEqual([300_000, 10_000]);
    const upstream = catalogWith([async () => report('first'), async () => report('second')]);
    expect(await upstream.catalog.get()).toStrictEqual(report('first'));
    upstream.advance(CATALOG_FRESH_MS - 1);
    expect(await upstream.catalog.get()).toStrictEqual(report('first'));
    expect(upstream.calls()).toBe(1);
    upstream.advance(1);
    expect(await upstream.catalog.get()).toStrictEqual(report('second'));
    expect(upstream.calls()).toBe(2);
  });

  it('keeps a failed inspection as "no report" for ten seconds only', async () => {
    const upstream = catalogWith([
      () => Promise.reject(new Error('connection refused')),
      async () => report('up'),
    ]);
    expect(await upstream.catalog.get()).toBeUndefined();
    upstream.advance(CATALOG_RETRY_MS - 1);
    expect(await upstream.catalog.get()).toBeUndefined();
    expect(upstream.calls()).toBe(1);
    upstream.advance(1);
    expect(await upstream.catalog.get()).toStrictEqual(report('up'));
  });

  it('shares one inspection between exchanges asking while it runs, however long it takes', async () => {
    let finish: (value: UpstreamReport) => void = () => {};
    const upstream = catalogWith([() => new Promise((resolve) => (finish = resolve))]);
    const first = upstream.catalog.get();
    upstream.advance(CATALOG_FRESH_MS * 2);
    const second = upstream.catalog.get();
    expect(upstream.calls()).toBe(1);
    finish(report('slow'));
    expect(await Promise.all([first, second])).toStrictEqual([report('slow'), report('slow')]);
  });

  it('counts freshness from when the inspection settled, not from when it started', async () => {
    let finish: (value: UpstreamReport) => void = () => {};
    const upstream = catalogWith([
      () => new Promise((resolve) => (finish = resolve)),
      async () => report('next'),
    ]);
    const pending = upstream.catalog.get();
    upstream.advance(60_000);
    finish(report('late'));
    await pending;
    upstream.advance(CATALOG_FRESH_MS - 1);
    expect(await upstream.catalog.get()).toStrictEqual(report('late'));
    expect(upstream.calls()).toBe(1);
  });

  it('uses a remembered report for five minutes instead of asking', async () => {
    const upstream = catalogWith([async () => report('asked')]);
    upstream.catalog.remember(report('told'));
    upstream.advance(CATALOG_FRESH_MS - 1);
    expect(await upstream.catalog.get()).toStrictEqual(report('told'));
    expect(upstream.calls()).toBe(0);
    upstream.advance(1);
    expect(await upstream.catalog.get()).toStrictEqual(report('asked'));
  });
});
