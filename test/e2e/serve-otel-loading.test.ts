/**
 * `tpx serve` loads the OpenTelemetry SDK and its exporters only when `OTEL_*` configures an exporter:
 * without it, of all the OpenTelemetry packages only the API is loaded (the spans are written against
 * it). Seen from a real `tpx serve` process, through a module-resolution hook (`module.register`) that
 * writes down every OpenTelemetry module the process resolves.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { startReceiver, type Receiver } from '../helpers/otlp-receiver.js';
import { startTpxServe } from './cli-process.js';
import { sendOneLinePrompt } from './serve-support.js';

let directory: string;
let upstream: MockModelServer;
let receiver: Receiver;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'tpx-otel-loading-'));
  writeFileSync(
    join(directory, 'hooks.mjs'),
    [
      "import { appendFileSync } from 'node:fs';",
      'export async function resolve(specifier, context, next) {',
      '  const resolved = await next(specifier, context);',
      "  if (resolved.url.includes('/@opentelemetry/')) appendFileSync(process.env.TPX_TEST_RESOLVED, resolved.url + '\\n');",
      '  return resolved;',
      '}',
    ].join('\n'),
  );
  writeFileSync(
    join(directory, 'register.mjs'),
    "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
  );
  upstream = await startMockModel({ token: 'loading-token' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await upstream.close();
  await receiver.close();
  rmSync(directory, { recursive: true, force: true });
});

/** The OpenTelemetry packages a `tpx serve` with `env` resolved while it served one exchange. */
async function packagesLoaded(name: string, env: Record<string, string>): Promise<string[]> {
  const list = join(directory, `${name}.txt`);
  writeFileSync(list, '');
  const serve = await startTpxServe([], {
    TPX_OAUTH_TOKEN: 'loading-token',
    TPX_BASE_URL: upstream.url,
    NODE_OPTIONS: `--import=${join(directory, 'register.mjs')}`,
    TPX_TEST_RESOLVED: list,
    ...env,
  });
  try {
    expect(await sendOneLinePrompt(serve.url)).toBe(200);
  } finally {
    expect(await serve.stop()).toBe(0);
  }
  const names = readFileSync(list, 'utf8')
    .split('\n')
    .map((url) => /\/@opentelemetry\/([^/]+)\//.exec(url)?.[1])
    .filter((each): each is string => each !== undefined);
  return [...new Set(names)].sort();
}

describe('tpx serve and the OpenTelemetry packages', () => {
  it('loads only the API without OTEL_*, and the SDK with the exporters of the protocol once they ask for it', async () => {
    expect(await packagesLoaded('off', {})).toStrictEqual(['api']);
    const on = await packagesLoaded('on', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    for (const expected of [
      'sdk-trace-base',
      'exporter-trace-otlp-proto',
      'sdk-metrics',
      'exporter-metrics-otlp-proto',
    ]) {
      expect(on).toContain(expected);
    }
    expect(on).not.toContain('exporter-trace-otlp-http');
  });
});
