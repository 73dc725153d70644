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

/** A Chat Completions answer saying `ok`, as a local server gives it. */
function okCompletion(model: string) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
  };
}

/**
 * Like llama.cpp's server: one model listed (`owned_by: "llamacpp"`), its running context in `/props`,
 * and chat completions that answer `ok`.
 */
function startLlamaCppLike(contextTokens: number, ownedBy = 'llamacpp'): Promise<ScriptedServer> {
  return startScriptedServer((record) => {
    if (record.url === '/v1/models') {
      return step.json({
        object: 'list',
        data: [{ id: 'qwen3-4b', object: 'model', owned_by: ownedBy, meta: { n_ctx: contextTokens } }],
      });
    }
    if (record.url === '/props') {
      return step.json({ default_generation_settings: { n_ctx: contextTokens }, total_slots: 1 });
    }
    if (record.url === '/v1/chat/completions') return step.json(okCompletion('qwen3-4b'));
    return step.json(
      { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } },
      { status: 404 },
    );
  });
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
    expect(result.stdout).toContain("claude-opus-5-5 → tpx-mock-1 (the upstream's only model)");
    expect(result.stdout).toContain(
      `chat: POST ${mock.url}/chat/completions (model claude-sonnet-5-5, max_tokens 16)`,
    );
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
    expect(result.stdout).toContain('claude-opus-5-5 → refused');
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

  it("fails when the upstream's context window cannot hold Claude Code's first request, naming llama.cpp's flag", async () => {
    const small = await startLlamaCppLike(4096);
    try {
      const result = await doctor(`${small.url}/v1`, { TPX_DIALECT: 'llamacpp' });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('context window: FAILED');
      expect(result.stdout).toContain(
        `the context window of qwen3-4b is 4096 tokens (from ${small.url}/props)`,
      );
      expect(result.stdout).toContain("Claude Code's first request alone is about 15000 input tokens");
      expect(result.stdout).toContain('fix: restart llama-server with -c 32768 (--ctx-size 32768)');
      expect(result.stdout).not.toContain('all checks passed');
      // It fails before the chat check: the tiny request would have passed.
      expect(small.requests.some((request) => request.url === '/v1/chat/completions')).toBe(false);
    } finally {
      await small.close();
    }
  });

  it("passes a context window that holds Claude Code's first request and room for its answer", async () => {
    const large = await startLlamaCppLike(32768);
    try {
      const result = await doctor(`${large.url}/v1`, { TPX_DIALECT: 'llamacpp' });
      expect(result.stdout).toContain(
        "context window: holds Claude Code's first request (about 15000 tokens) and 4096 output tokens",
      );
      expect(result.stdout).toContain('all checks passed');
      expect(result.code).toBe(0);
    } finally {
      await large.close();
    }
  });

  it("names vLLM's --max-model-len for a mapped model whose stated window is too small", async () => {
    const result = await doctor(`${vllm.url}/v1`, { TPX_DIALECT: 'vllm', TPX_MODEL_MAP: '*=qwen3-4b' });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `the context window of qwen3-4b is 8192 tokens (from ${vllm.url}/v1/models`,
    );
    expect(result.stdout).toContain('fix: restart vLLM with --max-model-len 32768');
  });

  it('detects llama.cpp from /props when no dialect is set, says so, and names its context flag', async () => {
    const small = await startLlamaCppLike(4096, 'organization');
    try {
      const result = await doctor(`${small.url}/v1`);
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(`server: llama.cpp (detected from GET ${small.url}/props)`);
      expect(result.stdout).toContain('--dialect llamacpp (TPX_DIALECT=llamacpp)');
      expect(result.stdout).toContain('fix: restart llama-server with -c 32768 (--ctx-size 32768)');
    } finally {
      await small.close();
    }
  });

  it('detects Ollama from /api/version and LM Studio from /api/v0/models', async () => {
    const answer = (own: string) =>
      startScriptedServer((record) => {
        if (record.url === '/v1/models') return step.json({ object: 'list', data: [{ id: 'qwen3:latest' }] });
        if (record.url === '/v1/chat/completions') return step.json(okCompletion('qwen3:latest'));
        if (record.url === own && own === '/api/version') return step.json({ version: '0.12.3' });
        if (record.url === own) return step.json({ object: 'list', data: [{ id: 'qwen3', type: 'llm' }] });
        return step.json({ error: 'not found' }, { status: 404 });
      });
    const ollama = await answer('/api/version');
    const studio = await answer('/api/v0/models');
    try {
      const first = await doctor(`${ollama.url}/v1`);
      expect(first.stdout).toContain(`server: Ollama (detected from GET ${ollama.url}/api/version)`);
      const second = await doctor(`${studio.url}/v1`);
      expect(second.stdout).toContain(`server: LM Studio (detected from GET ${studio.url}/api/v0/models)`);
      expect(second.stdout).toContain('all checks passed');
    } finally {
      await ollama.close();
      await studio.close();
    }
  });

  it('fails a model map whose target the upstream does not list, naming a listed id as the fix', async () => {
    const large = await startLlamaCppLike(32768);
    try {
      const result = await doctor(`${large.url}/v1`, { TPX_MODEL_MAP: '*=qwen3-32b' });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('the upstream does not serve the model "qwen3-32b": it lists qwen3-4b');
      expect(result.stdout).toContain(
        "fix: set TPX_MODEL_MAP (--model-map) to models it lists, e.g. '*=qwen3-4b'",
      );
      expect(large.requests.some((request) => request.url === '/v1/chat/completions')).toBe(false);
    } finally {
      await large.close();
    }
  });

  it('reports no credentials as a failure with the flags that fix it', async () => {
    const result = await runTpx(['doctor']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('--token local');
  });
});
