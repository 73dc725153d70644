/**
 * A retried exchange says why: which attempt failed and how (the deadline that passed, or the status),
 * in its log line and on its span, instead of a bare `"attempts": 2`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/start-server.js';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.js';
import { createTransport } from '../../src/transport/create-transport.js';
import { attributes, spansOf, startReceiver } from '../helpers/otlp-receiver.js';
import { startScriptedServer, step, textMessage } from '../helpers/scripted-server.js';
import { captureLogs, sendOneLinePrompt } from './serve-support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('retry reasons', () => {
  it('logs, for a retried exchange, the attempt that failed and the deadline that passed', async () => {
    const upstream = await startScriptedServer([step.noHeaders(), step.json(textMessage('second time'))]);
    closers.push(() => upstream.close());
    const transport = createTransport({
      env: {},
      anthropicApiKey: 'sk-ant-retry-reasons',
      anthropicBaseUrl: upstream.url,
      firstByteTimeoutMs: 200,
      sleep: () => Promise.resolve(),
    });
    const logs = captureLogs();
    const server = await startServer({ transport, port: 0, logger: logs.logger, telemetry: false });
    closers.push(async () => {
      await server.close();
      await transport.close();
    });
    expect(await sendOneLinePrompt(server.url)).toBe(200);
    const line = logs.lines().find((entry) => entry['msg'] === 'exchange')!;
    expect(line['attempts']).toBe(2);
    expect(line['retries']).toEqual([
      {
        attempt: 1,
        error: 'MODEL_ETIMEOUT',
        deadline: 'first-byte',
        reason: expect.stringContaining('no response headers within 200 ms (first-byte deadline)') as unknown,
        delayMs: expect.any(Number) as unknown,
      },
    ]);
  });

  it('names each retry with its status on the exchange span', async () => {
    const receiver = await startReceiver();
    closers.push(() => receiver.close());
    const upstream = await startScriptedServer([
      step.json({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }, { status: 529 }),
      step.json(textMessage('traced answer')),
    ]);
    closers.push(() => upstream.close());
    const tracing = (await startTracing(
      {
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      },
      { providerName: 'anthropic', version: '0.0.0-test' },
    )) as Tracing;
    const transport = createTransport({
      env: {},
      anthropicApiKey: 'sk-ant-retry-reasons',
      anthropicBaseUrl: upstream.url,
      sleep: () => Promise.resolve(),
    });
    const server = await startServer({ transport, port: 0, logger: false, telemetry: tracing });
    closers.push(async () => {
      await server.close();
      await transport.close();
    });
    expect(await sendOneLinePrompt(server.url, 'claude-test')).toBe(200);
    await tracing.shutdown();
    const exchange = spansOf(receiver).find((span) => span.name === 'chat claude-test')!;
    const reasons = attributes(exchange)['tpx.retry.reasons'] as string[];
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(/^attempt 1: MODEL_EHTTP 529: /);
    expect(reasons[0]).toContain('busy');
  });
});
