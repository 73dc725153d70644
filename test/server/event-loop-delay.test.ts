/**
 * The event loop's delay in the proxy's metrics: an idle loop reads as (nearly) undelayed, not as the
 * sampling interval, and a loop held busy shows the stall; each scrape covers the time since the last.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerEventLoopDelay } from '../../src/telemetry/event-loop-delay.js';
import { createProxyMetrics, EVENT_LOOP_SAMPLE_INTERVAL_MS } from '../../src/telemetry/metrics.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The value of each `nodejs_eventloop_lag*` gauge in `registry`, by name. */
async function lagGauges(registry: Registry): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    if (!metric.name.startsWith('nodejs_eventloop_lag')) continue;
    expect(metric.values).toHaveLength(1);
    values[metric.name] = metric.values[0]!.value;
  }
  return values;
}

/** A registry with the gauges alone, sampling every 100 ms. */
function monitored(): Registry {
  const registry = new Registry();
  registerEventLoopDelay(registry, 100);
  return registry;
}

/**
 * What an idle loop reads: Node's samples are interval + delay, 0.1 s and more on an idle loop before
 * the interval is taken off.
 */
function expectIdle(lag: Record<string, number>): void {
  expect(lag['nodejs_eventloop_lag_min_seconds']).toBeGreaterThanOrEqual(0);
  expect(lag['nodejs_eventloop_lag_min_seconds']).toBeLessThan(0.05);
  expect(lag['nodejs_eventloop_lag_p50_seconds']).toBeLessThan(0.08);
}

/** Keeps the event loop busy for `ms`. */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy
  }
}

describe('the event loop delay gauges', () => {
  it('read an idle loop as barely delayed, not as the sampling interval', async () => {
    const registry = monitored();
    await sleep(1_100);
    expectIdle(await lagGauges(registry));
  });

  it('show a stall of the loop in the maximum of the next scrape, and only there', async () => {
    const registry = monitored();
    await sleep(300);
    await lagGauges(registry);
    // The first firing after a scrape only marks the time again (Node forgets the last one on reset).
    await sleep(150);
    block(400);
    await sleep(250);
    const stalled = await lagGauges(registry);
    // The timer due during the stall ran 300–400 ms late.
    expect(stalled['nodejs_eventloop_lag_max_seconds']).toBeGreaterThanOrEqual(0.25);
    await sleep(500);
    // The next scrape covers only the idle time since (with the interval in them, its samples read 0.1 s).
    const after = await lagGauges(registry);
    expect(after['nodejs_eventloop_lag_max_seconds']).toBeLessThan(0.2);
    expect(after['nodejs_eventloop_lag_min_seconds']).toBeLessThan(0.05);
  });

  it('keep their values through a scrape that comes before the next sample', async () => {
    const registry = monitored();
    await sleep(350);
    const first = await lagGauges(registry);
    const second = await lagGauges(registry);
    expect(second).toStrictEqual(first);
  });

  it('replace prom-client’s in the proxy metrics: one of each name, the interval taken off', async () => {
    const metrics = createProxyMetrics({ provider: 'tpx' });
    await sleep(EVENT_LOOP_SAMPLE_INTERVAL_MS * 6);
    const lag = await lagGauges(metrics.registry);
    expect(Object.keys(lag).sort()).toStrictEqual([
      'nodejs_eventloop_lag_max_seconds',
      'nodejs_eventloop_lag_mean_seconds',
      'nodejs_eventloop_lag_min_seconds',
      'nodejs_eventloop_lag_p50_seconds',
      'nodejs_eventloop_lag_p90_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_eventloop_lag_stddev_seconds',
    ]);
    expectIdle(lag);
  });
});
