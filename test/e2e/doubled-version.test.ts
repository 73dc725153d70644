/**
 * A client whose base URL ends in `/v1` (`ANTHROPIC_BASE_URL=http://127.0.0.1:8787/v1`) sends
 * `/v1/v1/messages`: the proxy serves it, and logs once what to fix, instead of a bare 404 that Claude
 * Code shows as "There's an issue with the selected model".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTpxProxy, type TpxProxy } from './serve-support.js';

describe('a base URL with an extra /v1', () => {
  let proxy: TpxProxy;
  beforeAll(async () => {
    proxy = await startTpxProxy();
  });
  afterAll(async () => {
    await proxy.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${proxy.server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
  const request = { model: 'claude-sonnet-4-5', max_tokens: 32, messages: [{ role: 'user', content: 'Hi' }] };

  it('serves /v1/v1/messages and /v1/v1/messages/count_tokens as their /v1 routes, warning once with the fix', async () => {
    const first = await post('/v1/v1/messages?beta=true', request);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { type: string }).type).toBe('message');
    const count = await post('/v1/v1/messages/count_tokens', {
      model: request.model,
      messages: request.messages,
    });
    expect(count.status).toBe(200);
    expect(((await count.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    const warnings = proxy.logs.lines().filter((line) => String(line['msg']).includes('/v1/v1/'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!['msg']).toContain(`fix: set ANTHROPIC_BASE_URL=${proxy.server.url} (without /v1)`);
  });

  it('still answers 404 for a doubled /v1 before a path that is no route', async () => {
    const response = await post('/v1/v1/nothing', request);
    expect(response.status).toBe(404);
  });
});
