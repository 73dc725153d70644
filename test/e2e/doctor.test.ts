/**
 * `tpx doctor` as a process against real HTTP servers on loopback: a working upstream, and each way a
 * user gets the URL or the model wrong. Every wrong one exits non-zero with its own fix.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { startScriptedServer, step, type ScriptedServer } from '../helpers/scripted-server.js';
import { runTpx } from './cli-process.js';

/** A plain HTTP server answering with `answer`; closed after the tests. */
async function startPlain(
  answer: (method: string, url: string) => { status: number; body: string },
): Promise<Server> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const { status, body } = answer(request.method ?? 'GET', request.url ?? '/');
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

describe('tpx doctor', () => {
  let mock: MockModelServer;
  let vllm: ScriptedServer;
  let staticFiles: Server;
  let webApp: Server;
  let closedPort: number;

  beforeAll(async () => {
    mock = await startMockModel({});
    // vLLM-like: the API lives under /v1 only; other paths answer FastAPI's JSON 404.
    vllm = await startScriptedServer((record) => {
      if (record.url === '/v1/models') {
        return step.json({
          data: [
            { id: 'qwen3-4b', max_model_len: 8192 },
            { id: 'qwen3-32b', max_model_len: 32768 },
          ],
        });
      }
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
    // Like `python3 -m http.server`: files or an HTML 404; POST is 501.
    staticFiles = await startPlain((method, url) =>
      method !== 'GET'
        ? { status: 501, body: '<html><body><h1>Error response</h1><p>Error code: 501</p></body></html>' }
        : url === '/'
          ? { status: 200, body: '<html><body>Directory listing for /</body></html>' }
          : { status: 404, body: '<html><body><h1>Error response</h1><p>File not found</p></body></html>' },
    );
    // A single-page web app: every path is the same page.
    webApp = await startPlain(() => ({
      status: 200,
      body: '<!doctype html><html><div id="root"></div></html>',
    }));
    const probe = await startPlain(() => ({ status: 200, body: '' }));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  });

  afterAll(async () => {
    await mock.close();
    await vllm.close();
    await new Promise<void>((resolve) => staticFiles.close(() => resolve()));
    await new Promise<void>((resolve) => webApp.close(() => resolve()));
  });

  const doctor = (baseUrl: string, extra: Record<string, string> = {}) =>
    runTpx(['doctor'], { TPX_BASE_URL: baseUrl, TPX_OAUTH_TOKEN: 'local', ...extra });

  it('passes every check against a working upstream, printing the URLs it called and the mapping', async () => {
    // The mock model's URL is its API root, /v1 included.
    const result = await doctor(mock.url);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`model list: GET ${mock.url}/models → 200`);
    expect(result.stdout).toContain('upstream models: tpx-mock-1');
    expect(result.stdout).toContain("claude-opus-4-1 → tpx-mock-1 (the upstream's only model)");
    expect(result.stdout).toContain(`chat: POST ${mock.url}/chat/completions`);
    expect(result.stdout).toContain('all checks passed');
    expect(result.stdout).not.toContain('local'); // the token's value
  });

  it('suggests /v1 for a base URL without it, when /v1 answers with a model list', async () => {
    const result = await doctor(vllm.url);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${vllm.url}/models answered 404`);
    expect(result.stdout).toContain(`fix: set TPX_BASE_URL=${vllm.url}/v1`);
    expect(result.stdout).not.toContain('all checks passed');
  });

  it('refuses a chat completions URL pasted whole, with the API root as the fix, before any call', async () => {
    const before = vllm.requests.length;
    const result = await doctor(`${vllm.url}/v1/chat/completions`);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('TPX_BASE_URL ends in /chat/completions');
    expect(result.stdout).toContain(
      `fix: set TPX_BASE_URL=${vllm.url}/v1 (tpx adds /chat/completions itself)`,
    );
    expect(vllm.requests.length).toBe(before);
  });

  it('says a static file server is not the model API', async () => {
    const result = await doctor(`${urlOf(staticFiles)}/v1`);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('answered 404 with an HTML page');
    expect(result.stdout).toContain('is a web server without the model API (a static file server?)');
  });

  it('says an HTML app answering every path is not the model API', async () => {
    const result = await doctor(`${urlOf(webApp)}/v1`);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('answered with an HTML page');
    expect(result.stdout).toContain('that is a web app answering every path with a page, not the model API');
  });

  it('names the host and port when nothing listens there', async () => {
    const result = await doctor(`http://127.0.0.1:${closedPort}/v1`);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`nothing is listening at 127.0.0.1:${closedPort} (connection refused`);
    expect(result.stdout).toContain('fix: start the model server');
  });

  it('with the right URL and an unmappable model, lists what the upstream serves and names TPX_MODEL_MAP', async () => {
    const result = await doctor(`${vllm.url}/v1`);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('upstream models: qwen3-4b, qwen3-32b');
    expect(result.stdout).toContain('claude-opus-4-1 → refused');
    expect(result.stdout).toContain('TPX_MODEL_MAP');
    expect(result.stdout).not.toMatch(/fix: .*TPX_BASE_URL/);
  });

  it('with a TPX_MODEL the upstream does not serve, says so in the chat check, not that the URL is wrong', async () => {
    const result = await doctor(`${vllm.url}/v1`, { TPX_MODEL: 'qwen3-70b' });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('the upstream does not serve the model "qwen3-70b"');
    expect(result.stdout).toContain('fix: set TPX_MODEL_MAP');
    expect(result.stdout).not.toMatch(/fix: .*TPX_BASE_URL/);
  });

  it('reports no credentials as a failure with the flags that fix it', async () => {
    const result = await runTpx(['doctor']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('--token local');
  });
});
