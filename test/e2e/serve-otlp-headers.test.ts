/**
 * A hosted collector wants credentials: `OTEL_EXPORTER_OTLP_HEADERS` (and the per-signal
 * `OTEL_EXPORTER_OTLP_TRACES_HEADERS`) given to the `tpx serve` process reach the collector with every
 * trace and metric export, and the credential appears nowhere in what the proxy prints or sends upstream.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startMockModel } from '../../src/mock-model/mock-model.js';
import { startReceiver } from '../helpers/otlp-receiver.js';
import { startTpxServe } from './cli-process.js';
import { sendOneLinePrompt } from './serve-support.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const COLLECTOR_KEY = 'collector-key-7f3a9c';
const TRACES_KEY = 'traces-only-key-51b2';

describe('tpx serve exporting to a collector that wants credentials', () => {
  it('sends OTEL_EXPORTER_OTLP_HEADERS with every export, the per-signal ones winning, and prints neither', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const upstream = await startMockModel({ token: 'upstream-token' });
    closers.push(() => upstream.close());
    const serve = await startTpxServe([], {
      TPX_OAUTH_TOKEN: 'upstream-token',
      TPX_BASE_URL: upstream.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${COLLECTOR_KEY},x-scope-orgid=team-a`,
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: `authorization=Bearer ${TRACES_KEY}`,
      OTEL_METRIC_EXPORT_INTERVAL: '600000',
    });
    let stopped = false;
    closers.push(async () => {
      if (!stopped) await serve.stop();
    });

    expect(await sendOneLinePrompt(serve.url)).toBe(200);
    // SIGTERM: the proxy drains and exports what is still buffered (the span and the histograms).
    expect(await serve.stop()).toBe(0);
    stopped = true;

    const traces = receiver.exports.filter((entry) => entry.path === '/v1/traces');
    const metrics = receiver.exports.filter((entry) => entry.path === '/v1/metrics');
    expect(traces.length).toBeGreaterThan(0);
    expect(metrics.length).toBeGreaterThan(0);
    for (const entry of traces) {
      // The traces' own variable wins over the shared one for the same header.
      expect(entry.headers['authorization']).toBe(`Bearer ${TRACES_KEY}`);
      expect(entry.headers['x-scope-orgid']).toBe('team-a');
    }
    for (const entry of metrics) {
      expect(entry.headers['authorization']).toBe(`Bearer ${COLLECTOR_KEY}`);
      expect(entry.headers['x-scope-orgid']).toBe('team-a');
    }

    const printed = serve.stdout() + serve.stderr();
    expect(printed).toContain('listening on');
    for (const secret of [COLLECTOR_KEY, TRACES_KEY]) {
      expect(printed).not.toContain(secret);
      for (const request of upstream.requests) expect(JSON.stringify(request.headers)).not.toContain(secret);
    }
    expect(upstream.requests.length).toBeGreaterThan(0);
  });
});
