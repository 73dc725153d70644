/**
 * The errors a Messages client gets from `tpx serve` (a process, on loopback) when the upstream is set up
 * wrong, each naming what to change: a base URL without `/v1` (the 404 names the URL called and suggests
 * `/v1`), a model the server does not serve (the 404 names the model sent and `TPX_MODEL_MAP`), a port
 * nothing listens on (the host and port), and an upstream that leads back to the proxy itself (508 in one
 * hop, which neither the proxy nor the official SDK retries).
 */
import Anthropic from '@anthropic-ai/sdk';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';
import { startTpxServe } from './cli-process.js';

interface MessagesError {
  type: string;
  error: { type: string; message: string };
}

async function ask(proxyUrl: string): Promise<{ status: number; body: MessagesError }> {
  const response = await fetch(`${proxyUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });
  return { status: response.status, body: (await response.json()) as MessagesError };
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('errors that point at the fix, through tpx serve', () => {
  let vllm: ScriptedServer;

  beforeAll(async () => {
    // vLLM-like: the API lives under /v1 only; other paths answer FastAPI's JSON 404.
    vllm = await startScriptedServer((record) => {
      if (record.url === '/v1/models')
        return step.json({ data: [{ id: 'qwen3-32b', max_model_len: 32768 }] });
      if (record.url === '/v1/chat/completions') {
        const model = (record.json as { model: string }).model;
        return step.json(
          {
            object: 'error',
            message: `The model \`${model}\` does not exist.`,
            type: 'NotFoundError',
            code: 404,
          },
          { status: 404 },
        );
      }
      return step.json({ detail: 'Not Found' }, { status: 404 });
    });
  });

  afterAll(async () => {
    await vllm.close();
  });

  it(
    'answers a base URL without /v1 with a 404 naming the URL called and the /v1 fix',
    { timeout: 60_000 },
    async () => {
      const serve = await startTpxServe(
        ['--base-url', vllm.url, '--token', 'local', '--max-retries', '0'],
        {},
      );
      try {
        const { status, body } = await ask(serve.url);
        expect(status).toBe(404);
        expect(body.error.type).toBe('not_found_error');
        expect(body.error.message).toContain(
          `the upstream has no endpoint at POST ${vllm.url}/chat/completions`,
        );
        expect(body.error.message).toContain(
          `TPX_BASE_URL is usually the API root ending in /v1: try ${vllm.url}/v1`,
        );
      } finally {
        await serve.stop();
      }
    },
  );

  it(
    'answers a model the server does not serve with a 404 naming the model sent and TPX_MODEL_MAP',
    { timeout: 60_000 },
    async () => {
      const serve = await startTpxServe(
        ['--base-url', `${vllm.url}/v1`, '--token', 'local', '--max-retries', '0'],
        { TPX_MODEL: 'qwen3-70b' },
      );
      try {
        const { status, body } = await ask(serve.url);
        expect(status).toBe(404);
        expect(body.error.type).toBe('not_found_error');
        expect(body.error.message).toContain('the upstream does not serve the model "qwen3-70b"');
        expect(body.error.message).toContain('TPX_MODEL_MAP');
        expect(body.error.message).not.toContain('/v1:');
      } finally {
        await serve.stop();
      }
    },
  );

  it('answers a port nothing listens on with the host and port', { timeout: 60_000 }, async () => {
    const port = await closedPort();
    const serve = await startTpxServe(
      ['--base-url', `http://127.0.0.1:${port}/v1`, '--token', 'local', '--max-retries', '0'],
      {},
    );
    try {
      const { status, body } = await ask(serve.url);
      expect(status).toBe(502);
      expect(body.error.message).toContain(`nothing is listening at 127.0.0.1:${port} (connection refused`);
    } finally {
      await serve.stop();
    }
  });

  it(
    'answers a request loop with 508 in one hop that neither the proxy nor the official SDK retries',
    { timeout: 60_000 },
    async () => {
      // Another name for the proxy: every request that reaches it goes back to the proxy.
      let proxyPort = 0;
      const forwarded: string[] = [];
      const forwarder = createHttpServer((inbound, outbound) => {
        forwarded.push(`${inbound.method ?? ''} ${inbound.url ?? ''}`);
        const onward = httpRequest(
          {
            host: '127.0.0.1',
            port: proxyPort,
            method: inbound.method,
            path: inbound.url,
            headers: inbound.headers,
          },
          (answer) => {
            outbound.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outbound);
          },
        );
        onward.on('error', () => outbound.destroy());
        inbound.pipe(onward);
      });
      await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
      const forwarderUrl = `http://127.0.0.1:${(forwarder.address() as AddressInfo).port}`;
      // The proxy's port must be known before it starts: take a free one.
      proxyPort = await closedPort();
      const serve = await startTpxServe(['--port', String(proxyPort)], {
        ANTHROPIC_API_KEY: 'sk-ant-loop-example',
        ANTHROPIC_BASE_URL: forwarderUrl,
      });
      try {
        // The official SDK retries 5xx by default (twice) unless the answer says not to.
        const client = new Anthropic({ baseURL: serve.url, apiKey: 'unused' });
        const failure = await client.messages
          .create({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] })
          .catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(Anthropic.APIError);
        const apiError = failure as InstanceType<typeof Anthropic.APIError>;
        expect(apiError.status).toBe(508);
        expect(apiError.message).toContain(`request loop: this request already passed through this proxy`);
        expect(apiError.headers?.get('x-should-retry')).toBe('false');
        // One trip around the loop for the one request: no retry by the proxy, none by the SDK.
        expect(forwarded.filter((line) => line.startsWith('POST /v1/messages'))).toEqual([
          'POST /v1/messages',
        ]);
      } finally {
        await serve.stop();
        await new Promise<void>((resolve) => forwarder.close(() => resolve()));
      }
    },
  );
});
