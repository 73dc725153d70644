/**
 * One request cannot freeze the others: a token estimate of hostile text (long runs with no space, where
 * the BPE's cost grows much faster than the input) leaves the proxy's event loop free, so `/healthz`
 * keeps answering while it runs, on `count_tokens` and on a translated stream (whose `message_start`
 * carries the same estimate). The bound is on the loop's blocking relative to an idle baseline, and
 * generous: unbounded, the hostile texts here hold the loop for seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTpxProxy, type TpxProxy } from './serve-support.js';

let proxy: TpxProxy;

beforeAll(async () => {
  proxy = await startTpxProxy({ transport: { maxRetries: 0 } });
  // The tokenizer's ranks load once, on first use (a few hundred ms): not part of what is measured.
  await countTokens('warm up');
});

afterAll(async () => {
  await proxy.close();
});

function countTokens(text: string): Promise<Response> {
  return fetch(`${proxy.server.url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-test', messages: [{ role: 'user', content: text }] }),
  });
}

function streamMessage(text: string): Promise<Response> {
  return fetch(`${proxy.server.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'claude-test',
      max_tokens: 16,
      stream: true,
      messages: [{ role: 'user', content: text }],
    }),
  });
}

/** The slowest `/healthz` round trip while `work` runs (polled every 5 ms), and work's result. */
async function slowestHealthCheckDuring<T>(work: Promise<T>): Promise<{ slowestMs: number; result: T }> {
  let done = false;
  const finished = work.finally(() => {
    done = true;
  });
  let slowestMs = 0;
  let probes = 0;
  while (!done || probes === 0) {
    const startedAt = performance.now();
    const answer = await fetch(`${proxy.server.url}/healthz`);
    await answer.text();
    slowestMs = Math.max(slowestMs, performance.now() - startedAt);
    probes++;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { slowestMs, result: await finished };
}

async function idleBaselineMs(): Promise<number> {
  const { slowestMs } = await slowestHealthCheckDuring(new Promise((resolve) => setTimeout(resolve, 150)));
  return slowestMs;
}

/** Generous: ten times the idle baseline, and never less than 750 ms. */
function allowedMs(baselineMs: number): number {
  return Math.max(10 * baselineMs, 750);
}

describe('a hostile token estimate', () => {
  it('leaves /healthz answering while count_tokens counts a 25 KB run with no space', async () => {
    const baselineMs = await idleBaselineMs();
    const { slowestMs, result } = await slowestHealthCheckDuring(countTokens('a'.repeat(25_000)));
    expect(result.status).toBe(200);
    const count = (await result.json()) as { input_tokens: number };
    // Still an estimate on the high side: at least one token per eight characters, times the factor.
    expect(count.input_tokens).toBeGreaterThan(25_000 / 8);
    expect(slowestMs, `baseline ${baselineMs.toFixed(1)} ms`).toBeLessThan(allowedMs(baselineMs));
  });

  it('stays bounded for 150 KB runs of letters, of mixed symbols and of random printable characters', async () => {
    const random = Array.from({ length: 150_000 }, (_, index) =>
      String.fromCharCode(33 + ((index * 7919) % 94)),
    ).join('');
    for (const [label, text] of [
      ['letters', 'a'.repeat(150_000)],
      ['mixed', 'x9Q_'.repeat(37_500)],
      ['random', random],
    ] as const) {
      const baselineMs = await idleBaselineMs();
      const { slowestMs, result } = await slowestHealthCheckDuring(countTokens(text));
      expect(result.status, label).toBe(200);
      const count = (await result.json()) as { input_tokens: number };
      expect(count.input_tokens, label).toBeGreaterThan(150_000 / 8);
      expect(slowestMs, `${label}: baseline ${baselineMs.toFixed(1)} ms`).toBeLessThan(allowedMs(baselineMs));
    }
  });

  it('leaves /healthz answering while a translated stream estimates its message_start usage', async () => {
    const baselineMs = await idleBaselineMs();
    const { slowestMs, result } = await slowestHealthCheckDuring(
      streamMessage('b'.repeat(25_000)).then(async (response) => ({
        status: response.status,
        text: await response.text(),
      })),
    );
    expect(result.status).toBe(200);
    expect(result.text).toContain('message_stop');
    expect(slowestMs, `baseline ${baselineMs.toFixed(1)} ms`).toBeLessThan(allowedMs(baselineMs));
  });
});
