/**
 * Secrets stay secret: the Anthropic key, the OAuth token and the proxy token never appear in logs, in
 * error messages and bodies (also when the upstream echoes a credential back in its error text, as
 * OpenAI-compatible servers do: "Incorrect API key provided: …"), in `selection.reason`, in `/healthz`,
 * or in `tpx doctor` output; and each credential only goes where it belongs.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTransport,
  isTransportError,
  type ModelTransport,
  type TransportOptions,
} from '../../src/index.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import {
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';

const KEY = 'sk-ant-api03-security-suite-key-5e1f0c';
const TOKEN = 'tpx-oauth-security-suite-token-9b27d4';
const PROXY_TOKEN = 'proxy-security-suite-token-c3a81e';
const CLIENT_KEY = 'sk-ant-client-own-key-never-upstream-77';
const SECRETS = [KEY, TOKEN, PROXY_TOKEN];

function expectNoSecret(text: string, where: string): void {
  for (const secret of SECRETS) expect(text.includes(secret), `${where} contains a secret`).toBe(false);
}

/** Everything the upstream was given, as one string. */
function presented(record: RecordedRequest): string {
  return `${record.headers['authorization'] ?? ''} ${record.headers['x-api-key'] ?? ''}`;
}

/**
 * An upstream that echoes the credentials it was given, in every way an error can carry text: a JSON
 * error body, an HTML page, an unparseable 200, an error inside a 200 stream. The request's model picks
 * the behaviour; `/models` and `count_tokens` echo in a 401.
 */
function echoingUpstream(record: RecordedRequest): Step {
  const echo = presented(record);
  const close = { connection: 'close' };
  if (record.url.includes('/models') || record.url.includes('count_tokens')) {
    return step.json(
      { error: { message: `Incorrect API key provided: ${echo}`, type: 'invalid_request_error' } },
      { status: 401, headers: close },
    );
  }
  const body = record.json as { model?: string; stream?: boolean } | undefined;
  const stream = body?.stream === true;
  switch (body?.model ?? '') {
    case 'echo-401':
      return step.json(
        {
          error: {
            message: `Incorrect API key provided: ${echo}`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        },
        { status: 401, headers: close },
      );
    case 'echo-403-anthropic':
      return step.json(
        { type: 'error', error: { type: 'permission_error', message: `key ${echo} may not use this model` } },
        { status: 403, headers: close },
      );
    case 'echo-html':
      return step.text(
        502,
        `<html><head><title>Bad gateway for ${echo}</title></head><body>${echo}</body></html>`,
        {
          'content-type': 'text/html',
          ...close,
        },
      );
    case 'echo-invalid-200':
      return step.text(200, `this is not JSON, ${echo}`, {
        'content-type': stream ? 'text/event-stream' : 'application/json',
        ...close,
      });
    case 'echo-stream-error':
      return step.sse(
        [
          `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: `token ${echo} expired` } })}\n\n`,
        ],
        { headers: close },
      );
    default:
      return step.json({ error: { message: 'unexpected request' } }, { status: 418, headers: close });
  }
}

const BEHAVIOURS = ['echo-401', 'echo-403-anthropic', 'echo-html', 'echo-invalid-200', 'echo-stream-error'];

function request_(model: string, stream = false) {
  return { model, max_tokens: 16, stream, messages: [{ role: 'user' as const, content: 'Hello' }] };
}

let upstream: ScriptedServer;

/** `tpx doctor` runs, started with the suite and awaited by its test, so the child processes overlap the rest. */
let doctorRuns: Promise<{ code: number; output: string }[]>;

beforeAll(async () => {
  upstream = await startScriptedServer(echoingUpstream);
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'tpx-security-')), 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  doctorRuns = Promise.all([
    // anthropic selected; the OAuth token and the proxy token are set too and must not show either
    doctor({
      ANTHROPIC_API_KEY: KEY,
      ANTHROPIC_BASE_URL: upstream.url,
      TPX_OAUTH_TOKEN: TOKEN,
      TPX_PROXY_TOKEN: PROXY_TOKEN,
    }),
    doctor({
      TPX_OAUTH_TOKEN_FILE: tokenFile,
      TPX_BASE_URL: `${upstream.url}/v1`,
      TPX_PROXY_TOKEN: PROXY_TOKEN,
    }),
  ]);
});

afterAll(async () => {
  await upstream.close();
});

const PROVIDERS: { name: 'anthropic' | 'tpx'; options: () => TransportOptions }[] = [
  { name: 'anthropic', options: () => ({ anthropicApiKey: KEY, anthropicBaseUrl: upstream.url }) },
  { name: 'tpx', options: () => ({ tpxToken: TOKEN, tpxBaseUrl: `${upstream.url}/v1` }) },
];

describe.each(PROVIDERS)('$name: secrets never reach the caller', ({ name, options }) => {
  let transport: ModelTransport;

  beforeAll(() => {
    transport = createTransport({ env: {}, maxRetries: 0, ...options() });
  });
  afterAll(async () => {
    await transport.close();
  });

  it('keeps them out of the selection reason', () => {
    expect(transport.selection.provider).toBe(name);
    expectNoSecret(JSON.stringify(transport.selection), 'selection');
    expectNoSecret(inspect(transport, { depth: 4 }), 'the inspected transport');
  });

  it.each(BEHAVIOURS)(
    'keeps them out of every error, also when the upstream echoes them (%s)',
    async (model) => {
      const errors: unknown[] = [];
      await transport.send(request_(model)).catch((error: unknown) => errors.push(error));
      try {
        for await (const _event of transport.stream(request_(model, true))) {
          // events before the error are fine; only the error is looked at
        }
      } catch (error) {
        errors.push(error);
      }
      expect(errors).toHaveLength(2);
      for (const error of errors) {
        expect(isTransportError(error)).toBe(true);
        if (!isTransportError(error)) continue;
        expectNoSecret(error.message, 'error.message');
        expectNoSecret(JSON.stringify(error.body), 'error.body');
        expectNoSecret(String(error.stack), 'error.stack');
        expectNoSecret(inspect(error, { depth: 8 }), 'the inspected error with its causes');
      }
    },
  );

  it('keeps them out of count_tokens and model-list errors', async () => {
    const failures: unknown[] = [];
    await transport.listModels?.().catch((error: unknown) => failures.push(error));
    await transport
      .countTokens?.({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error: unknown) => failures.push(error));
    for (const failure of failures) expectNoSecret(inspect(failure, { depth: 8 }), 'the error');
  });
});

// ---------------------------------------------------------------------------------------------------

function captureLogs() {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { logger: pino({ level: 'trace' }, destination), text: () => chunks.join('') };
}

async function call(
  url: string,
  path: string,
  init: { method?: 'GET' | 'POST'; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: string; body: string }> {
  const response = await request(`${url}${path}`, {
    method: init.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return {
    status: response.statusCode,
    headers: JSON.stringify(response.headers),
    body: await response.body.text(),
  };
}

describe.each(PROVIDERS)('$name: tpx serve keeps secrets out of logs and answers', ({ options }) => {
  let transport: ModelTransport;
  let server: RunningServer;
  let logs: ReturnType<typeof captureLogs>;
  const answers: string[] = [];

  beforeAll(async () => {
    logs = captureLogs();
    transport = createTransport({ env: {}, maxRetries: 0, ...options() });
    server = await startServer({ transport, port: 0, logger: logs.logger, proxyToken: PROXY_TOKEN });
  });
  afterAll(async () => {
    await server.close();
    await transport.close();
    // Everything logged over the whole run, at every level, including start-up and shutdown.
    expect(logs.text()).toContain('"msg":"exchange"');
    expectNoSecret(logs.text(), 'the log');
    expectNoSecret(answers.join('\n'), 'an answer');
  });

  it('answers every failure without a secret, JSON and SSE', async () => {
    const auth = { authorization: `Bearer ${PROXY_TOKEN}` };
    for (const model of BEHAVIOURS) {
      for (const stream of [false, true]) {
        const answer = await call(server.url, '/v1/messages', {
          body: request_(model, stream),
          headers: auth,
        });
        answers.push(answer.headers, answer.body);
      }
    }
    for (const path of ['/v1/models', '/v1/messages/count_tokens']) {
      const answer = await call(server.url, path, {
        method: path === '/v1/models' ? 'GET' : 'POST',
        headers: auth,
        ...(path === '/v1/models'
          ? {}
          : { body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } }),
      });
      answers.push(answer.headers, answer.body);
    }
  });

  it('does not repeat a presented token, right or wrong, in its 401', async () => {
    for (const presentedToken of [`${PROXY_TOKEN.slice(0, -1)}x`, 'short', CLIENT_KEY]) {
      const answer = await call(server.url, '/v1/messages', {
        body: request_('echo-401'),
        headers: { 'x-api-key': presentedToken },
      });
      expect(answer.status).toBe(401);
      expect(answer.body).not.toContain(presentedToken);
      answers.push(answer.headers, answer.body);
    }
  });

  it('serves /healthz without a token and without a secret', async () => {
    const answer = await call(server.url, '/healthz', { method: 'GET' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ ok: true });
    answers.push(answer.headers, answer.body);
  });
});

// ---------------------------------------------------------------------------------------------------

describe('which credential goes where', () => {
  it('sends the tpx host only the bearer token: no x-api-key, no anthropic headers, whatever the client sent', async () => {
    const mock = await startScriptedServer(() =>
      step.json(
        { choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] },
        { headers: { connection: 'close' } },
      ),
    );
    const transport = createTransport({
      env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${mock.url}/v1` },
      maxRetries: 0,
    });
    const server = await startServer({ transport, port: 0, logger: false });
    try {
      expect(transport.provider).toBe('tpx');
      const answer = await call(server.url, '/v1/messages?beta=true', {
        body: request_('m'),
        headers: {
          'x-api-key': CLIENT_KEY,
          authorization: `Bearer ${CLIENT_KEY}`,
          'anthropic-version': '2023-06-01',
          'anthropic-beta': 'tools-2024-04-04',
        },
      });
      expect(answer.status).toBe(200);
      const seen = mock.requests[0]!;
      expect(seen.headers['authorization']).toBe(`Bearer ${TOKEN}`);
      expect(seen.headers['x-api-key']).toBeUndefined();
      expect(Object.keys(seen.headers).filter((header) => header.startsWith('anthropic-'))).toEqual([]);
      expect(JSON.stringify(seen)).not.toContain(CLIENT_KEY);
    } finally {
      await server.close();
      await transport.close();
      await mock.close();
    }
  });

  it('sends the Anthropic host only the key, never a bearer token, even with TPX_OAUTH_TOKEN set too', async () => {
    const mock = await startScriptedServer(() =>
      step.json(
        {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'm',
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
        { headers: { connection: 'close' } },
      ),
    );
    const transport = createTransport({
      env: {
        ANTHROPIC_API_KEY: KEY,
        ANTHROPIC_BASE_URL: mock.url,
        TPX_OAUTH_TOKEN: TOKEN,
        TPX_BASE_URL: `${mock.url}/v1`,
      },
      maxRetries: 0,
    });
    const server = await startServer({ transport, port: 0, logger: false });
    try {
      expect(transport.provider).toBe('anthropic');
      await transport.send(request_('m'));
      const answer = await call(server.url, '/v1/messages', {
        body: request_('m'),
        headers: { authorization: `Bearer ${CLIENT_KEY}`, 'x-api-key': CLIENT_KEY },
      });
      expect(answer.status).toBe(200);
      expect(mock.requests).toHaveLength(2);
      for (const seen of mock.requests) {
        expect(seen.headers['x-api-key']).toBe(KEY);
        expect(seen.headers['authorization']).toBeUndefined();
        expect(JSON.stringify(seen)).not.toContain(TOKEN);
        expect(JSON.stringify(seen)).not.toContain(CLIENT_KEY);
      }
    } finally {
      await server.close();
      await transport.close();
      await mock.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------------

const BUILT_CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const SOURCE_CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

/** Runs `tpx doctor` as a child process: the built CLI (`npm test` builds it first), else the source. */
function doctor(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const args = existsSync(BUILT_CLI) ? [BUILT_CLI, 'doctor'] : ['--import', 'tsx', SOURCE_CLI, 'doctor'];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { env: { PATH: process.env['PATH'] ?? '', HOME: tmpdir(), ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, output: `${stdout}\n${stderr}` });
      },
    );
  });
}

describe('tpx doctor', () => {
  it('never prints the key, the token or the proxy token, whether the endpoint accepts them or echoes them back', async () => {
    for (const run of await doctorRuns) {
      expect(run.output).toMatch(/provider|configuration/);
      expectNoSecret(run.output, 'doctor output');
    }
    // The echoing upstream did see the credentials: the checks above were not vacuous.
    expect(upstream.requests.some((record) => presented(record).includes(KEY))).toBe(true);
    expect(upstream.requests.some((record) => presented(record).includes(TOKEN))).toBe(true);
  });
});
