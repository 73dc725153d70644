/**
 * OAuth token sources of the `tpx` provider, end to end over loopback: a static token, a token file that
 * rotates (as Kubernetes projected tokens do), and a token command (as `gcloud auth print-access-token`),
 * with one refresh-and-retry after a 401 and `MODEL_EAUTH` after a second one. The provider never
 * changes; only the token value does, and it never appears in an error or in `selection`.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/commands.js';
import {
  createTransport,
  isTransportError,
  type ModelTransport,
  type TransportError,
} from '../../src/index.js';
import {
  helloRequest,
  openAiSse,
  startScriptedServer,
  step,
  type RecordedRequest,
  type ScriptedServer,
  type Step,
} from '../helpers/scripted-server.js';

let tempDir: string;
let server: ScriptedServer;
/** Decides the answer to each request; tests replace it. */
let answer: (record: RecordedRequest) => Step;
const transports: ModelTransport[] = [];

beforeAll(async () => {
  tempDir = mkdtempSync(join(tmpdir(), 'tpx-token-source-'));
  server = await startScriptedServer((record) => answer(record));
});
afterAll(async () => {
  await server.close();
  rmSync(tempDir, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(transports.splice(0).map((transport) => transport.close()));
});

function track(transport: ModelTransport): ModelTransport {
  transports.push(transport);
  return transport;
}

function completion(text = 'Hi there') {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  };
}

/** A 401 whose message quotes the token it refused, as some servers do. */
function refused(record: RecordedRequest): Step {
  const token = (record.headers['authorization'] ?? '').replace(/^Bearer /, '');
  return step.json(
    {
      error: {
        message: `Incorrect API key provided: ${token}`,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      },
    },
    { status: 401 },
  );
}

/** Answers 200 to the accepted tokens and 401 to any other. */
function acceptOnly(...accepted: string[]): (record: RecordedRequest) => Step {
  return (record) =>
    accepted.some((token) => record.headers['authorization'] === `Bearer ${token}`)
      ? step.json(completion())
      : refused(record);
}

function bearerTokens(since: number): string[] {
  return server.requests
    .slice(since)
    .map((record) => (record.headers['authorization'] ?? '').replace(/^Bearer /, ''));
}

async function failure(promise: Promise<unknown>): Promise<TransportError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isTransportError(error)) throw new Error(`expected a TransportError, got ${String(error)}`);
  return error;
}

function configError(create: () => unknown): TransportError {
  try {
    create();
  } catch (error) {
    if (isTransportError(error)) return error;
    throw error;
  }
  throw new Error('expected createTransport to throw');
}

/** Everything an error shows a caller or a log. */
function visible(error: TransportError): string {
  return `${error.message} ${JSON.stringify(error.body)} ${JSON.stringify(error.headers)}`;
}

/**
 * A token command: a shell script that counts its runs in `<dir>/count` and prints `<prefix>-<n>`, or,
 * from run `failFrom` on, writes to stderr and exits 3.
 */
function tokenCommand(name: string, options: { prefix?: string; failFrom?: number } = {}) {
  const dir = join(tempDir, name);
  mkdirSync(dir, { recursive: true });
  const script = join(dir, 'print-token.sh');
  const prefix = options.prefix ?? `${name}-token`;
  const failFrom = options.failFrom ?? 0;
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `count_file='${join(dir, 'count')}'`,
      'n=$(cat "$count_file" 2>/dev/null || echo 0)',
      'n=$((n + 1))',
      'echo "$n" > "$count_file"',
      `if [ ${failFrom} -gt 0 ] && [ "$n" -ge ${failFrom} ]; then echo "ERROR: (gcloud.auth) reauthentication required" >&2; exit 3; fi`,
      `printf '  %s-%s\\n' '${prefix}' "$n"`,
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  return {
    command: `sh '${script}'`,
    runs: () =>
      existsSync(join(dir, 'count')) ? Number(readFileSync(join(dir, 'count'), 'utf8').trim()) : 0,
    token: (n: number) => `${prefix}-${n}`,
  };
}

function commandTransport(command: string, extra: Record<string, string> = {}): ModelTransport {
  return track(
    createTransport({
      env: { TPX_OAUTH_TOKEN_COMMAND: command, TPX_BASE_URL: `${server.url}/v1`, ...extra },
      maxRetries: 2,
    }),
  );
}

describe('a static token (TPX_OAUTH_TOKEN)', () => {
  it('names its source in selection and ends a 401 at once with MODEL_EAUTH, without showing the token', async () => {
    const token = 'static-secret-token-19af';
    const transport = track(
      createTransport({ env: { TPX_OAUTH_TOKEN: token, TPX_BASE_URL: `${server.url}/v1` }, maxRetries: 2 }),
    );
    expect(transport.selection.tokenSource).toEqual({ kind: 'static', origin: 'TPX_OAUTH_TOKEN' });
    answer = acceptOnly('another-token');
    const before = server.requests.length;
    const error = await failure(transport.send(helloRequest()));
    expect(error.code).toBe('MODEL_EAUTH');
    expect(error.status).toBe(401);
    expect(error.body.error.type).toBe('authentication_error');
    expect(bearerTokens(before)).toEqual([token]);
    expect(visible(error)).not.toContain(token);
    expect(error.message).toContain('TPX_OAUTH_TOKEN');
  });
});

describe('a token file (TPX_OAUTH_TOKEN_FILE)', () => {
  it('picks up a rotated file on the next exchange', async () => {
    const file = join(tempDir, 'rotating-token');
    writeFileSync(file, 'file-token-one\n');
    const transport = track(
      createTransport({
        env: { TPX_OAUTH_TOKEN_FILE: file, TPX_BASE_URL: `${server.url}/v1` },
        maxRetries: 0,
      }),
    );
    expect(transport.selection.reason).toBe('TPX_OAUTH_TOKEN_FILE is set and ANTHROPIC_API_KEY is not');
    expect(transport.selection.tokenSource).toEqual({ kind: 'file', origin: 'TPX_OAUTH_TOKEN_FILE' });
    answer = acceptOnly('file-token-one', 'file-token-two-rotated');
    const before = server.requests.length;

    await transport.send(helloRequest());
    writeFileSync(file, 'file-token-two-rotated\n');
    await transport.send(helloRequest());
    await transport.send(helloRequest());
    expect(bearerTokens(before)).toEqual([
      'file-token-one',
      'file-token-two-rotated',
      'file-token-two-rotated',
    ]);
  });

  it('follows a projected-token symlink swap, the way Kubernetes rotates tokens', async () => {
    const dir = join(tempDir, 'projected');
    mkdirSync(join(dir, 'v1'), { recursive: true });
    mkdirSync(join(dir, 'v2'), { recursive: true });
    writeFileSync(join(dir, 'v1', 'token'), 'projected-token-v1');
    writeFileSync(join(dir, 'v2', 'token'), 'projected-token-v2');
    symlinkSync('v1', join(dir, '..data'));
    symlinkSync(join('..data', 'token'), join(dir, 'token'));
    const transport = track(
      createTransport({
        env: { TPX_OAUTH_TOKEN_FILE: join(dir, 'token'), TPX_BASE_URL: `${server.url}/v1` },
        maxRetries: 0,
      }),
    );
    answer = acceptOnly('projected-token-v1', 'projected-token-v2');
    const before = server.requests.length;
    await transport.send(helloRequest());
    // The kubelet's atomic writer: a new `..data` link, renamed over the old one.
    symlinkSync('v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    await transport.send(helloRequest());
    expect(bearerTokens(before)).toEqual(['projected-token-v1', 'projected-token-v2']);
  });

  it('checks the file at most once per exchange: a rotation between two attempts waits for the next exchange', async () => {
    const file = join(tempDir, 'once-per-exchange-token');
    writeFileSync(file, 'exchange-token-a');
    const transport = track(
      createTransport({
        env: { TPX_OAUTH_TOKEN_FILE: file, TPX_BASE_URL: `${server.url}/v1` },
        maxRetries: 1,
        sleep: async () => undefined,
      }),
    );
    let calls = 0;
    answer = () => {
      calls += 1;
      if (calls === 1) {
        writeFileSync(file, 'exchange-token-b-longer');
        return step.json({ error: { message: 'try again', type: 'server_error' } }, { status: 500 });
      }
      return step.json(completion());
    };
    const before = server.requests.length;
    await transport.send(helloRequest());
    await transport.send(helloRequest());
    expect(bearerTokens(before)).toEqual(['exchange-token-a', 'exchange-token-a', 'exchange-token-b-longer']);
  });

  it('re-reads the file after a 401 and retries once with the new token', async () => {
    const file = join(tempDir, 'refresh-on-401-token');
    writeFileSync(file, 'stale-file-token');
    const transport = track(
      createTransport({
        env: { TPX_OAUTH_TOKEN_FILE: file, TPX_BASE_URL: `${server.url}/v1` },
        maxRetries: 0,
      }),
    );
    let calls = 0;
    answer = (record) => {
      calls += 1;
      // Rotated while the first request was in flight: this exchange already checked the file, so only
      // the 401 makes the source look again.
      if (calls === 1) writeFileSync(file, 'fresh-file-token');
      return acceptOnly('fresh-file-token')(record);
    };
    const before = server.requests.length;
    const message = await transport.send(helloRequest());
    expect(message.content).toEqual([{ type: 'text', text: 'Hi there' }]);
    expect(bearerTokens(before)).toEqual(['stale-file-token', 'fresh-file-token']);
  });

  it('ends with MODEL_EAUTH after one request when the file still holds the refused token', async () => {
    const file = join(tempDir, 'unchanged-token');
    writeFileSync(file, 'unchanged-file-token');
    const transport = track(
      createTransport({
        env: { TPX_OAUTH_TOKEN_FILE: file, TPX_BASE_URL: `${server.url}/v1` },
        maxRetries: 2,
      }),
    );
    answer = acceptOnly('something-else');
    const before = server.requests.length;
    const error = await failure(transport.send(helloRequest()));
    expect(error.code).toBe('MODEL_EAUTH');
    expect(bearerTokens(before)).toEqual(['unchanged-file-token']);
    expect(visible(error)).not.toContain('unchanged-file-token');
    expect(error.message).toContain('TPX_OAUTH_TOKEN_FILE');
  });
});

describe('a token command (TPX_OAUTH_TOKEN_COMMAND)', () => {
  it('runs on start, names the command in selection.reason, and sends its trimmed output', async () => {
    const source = tokenCommand('start');
    const transport = commandTransport(source.command);
    expect(source.runs()).toBe(1);
    expect(transport.provider).toBe('tpx');
    expect(transport.selection.reason).toBe('TPX_OAUTH_TOKEN_COMMAND is set and ANTHROPIC_API_KEY is not');
    expect(transport.selection.tokenSource).toEqual({ kind: 'command', origin: 'TPX_OAUTH_TOKEN_COMMAND' });
    expect(JSON.stringify(transport.selection)).not.toContain(source.token(1));
    answer = acceptOnly(source.token(1));
    const before = server.requests.length;
    await transport.send(helloRequest());
    await transport.send(helloRequest());
    expect(bearerTokens(before)).toEqual([source.token(1), source.token(1)]);
    expect(source.runs()).toBe(1);
  });

  it('runs again exactly once on a 401 and retries with the new token', async () => {
    const source = tokenCommand('refresh');
    const transport = commandTransport(source.command);
    answer = acceptOnly(source.token(2));
    const before = server.requests.length;
    const message = await transport.send(helloRequest());
    expect(message.content).toEqual([{ type: 'text', text: 'Hi there' }]);
    expect(bearerTokens(before)).toEqual([source.token(1), source.token(2)]);
    expect(source.runs()).toBe(2);
    // The refreshed token stays in use: no further runs.
    await transport.send(helloRequest());
    expect(source.runs()).toBe(2);
  });

  it('refreshes on a 401 to a stream request before any event', async () => {
    const source = tokenCommand('stream');
    const transport = commandTransport(source.command);
    answer = (record) =>
      record.headers['authorization'] === `Bearer ${source.token(2)}`
        ? step.sse(
            openAiSse([
              { choices: [{ index: 0, delta: { role: 'assistant', content: 'Streamed' } }] },
              { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
            ]),
          )
        : refused(record);
    const types: string[] = [];
    for await (const event of transport.stream(helloRequest())) types.push(event.type);
    expect(types.at(0)).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(source.runs()).toBe(2);
  });

  it('ends a second 401 with MODEL_EAUTH (401), never showing either token', async () => {
    const source = tokenCommand('second-401');
    const transport = commandTransport(source.command);
    answer = acceptOnly('never-issued');
    const before = server.requests.length;
    const error = await failure(transport.send(helloRequest()));
    expect(error.code).toBe('MODEL_EAUTH');
    expect(error.status).toBe(401);
    expect(error.retryable).toBe(false);
    expect(bearerTokens(before)).toEqual([source.token(1), source.token(2)]);
    expect(source.runs()).toBe(2);
    expect(visible(error)).not.toContain(source.token(1));
    expect(visible(error)).not.toContain(source.token(2));
    expect(error.message).toContain('also after the token was refreshed');
  });

  it('shares one run between exchanges refused at the same time', async () => {
    const source = tokenCommand('concurrent');
    const transport = commandTransport(source.command);
    answer = acceptOnly(source.token(2));
    const messages = await Promise.all([
      transport.send(helloRequest()),
      transport.send(helloRequest()),
      transport.send(helloRequest()),
    ]);
    expect(messages).toHaveLength(3);
    expect(source.runs()).toBe(2);
  });

  it('refuses a command that fails at start with MODEL_ECONFIG naming the variable and its stderr', () => {
    const source = tokenCommand('fails-at-start', { failFrom: 1 });
    const error = configError(() =>
      createTransport({ env: { TPX_OAUTH_TOKEN_COMMAND: source.command, TPX_BASE_URL: `${server.url}/v1` } }),
    );
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toContain('TPX_OAUTH_TOKEN_COMMAND');
    expect(error.message).toContain('exited with code 3');
    expect(error.message).toContain('reauthentication required');
  });

  it('refuses a command that prints nothing, or runs past its timeout, with MODEL_ECONFIG', () => {
    const silent = configError(() =>
      createTransport({ env: { TPX_OAUTH_TOKEN_COMMAND: 'true', TPX_BASE_URL: `${server.url}/v1` } }),
    );
    expect(silent.code).toBe('MODEL_ECONFIG');
    expect(silent.message).toContain('printed nothing');

    const startedAt = Date.now();
    const slow = configError(() =>
      createTransport({
        env: {
          TPX_OAUTH_TOKEN_COMMAND: 'sleep 5; echo late-token',
          TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS: '200',
          TPX_BASE_URL: `${server.url}/v1`,
        },
      }),
    );
    expect(slow.code).toBe('MODEL_ECONFIG');
    expect(slow.message).toContain('did not finish within 200 ms');
    expect(Date.now() - startedAt).toBeLessThan(4_000);
  });

  it('ends with MODEL_EAUTH when the refresh after a 401 fails', async () => {
    const source = tokenCommand('fails-on-refresh', { failFrom: 2 });
    const transport = commandTransport(source.command);
    answer = acceptOnly('never-issued');
    const before = server.requests.length;
    const error = await failure(transport.send(helloRequest()));
    expect(error.code).toBe('MODEL_EAUTH');
    expect(error.status).toBe(401);
    expect(error.message).toContain('TPX_OAUTH_TOKEN_COMMAND');
    expect(error.message).toContain('exited with code 3');
    expect(bearerTokens(before)).toEqual([source.token(1)]);
    expect(visible(error)).not.toContain(source.token(1));
  });

  it('prefers TPX_OAUTH_TOKEN_FILE over the command, without running it', () => {
    const source = tokenCommand('not-run');
    const file = join(tempDir, 'preferred-file-token');
    writeFileSync(file, 'preferred-file-token');
    const transport = track(
      createTransport({
        env: {
          TPX_OAUTH_TOKEN_FILE: file,
          TPX_OAUTH_TOKEN_COMMAND: source.command,
          TPX_BASE_URL: `${server.url}/v1`,
        },
      }),
    );
    expect(transport.selection.tokenSource?.kind).toBe('file');
    expect(source.runs()).toBe(0);
  });
});

describe('tpx doctor', () => {
  async function doctor(env: Record<string, string>) {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['doctor'], {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
      env,
      readStdin: async () => '',
    });
    return { code, stdout, stderr };
  }

  it('reports the dialect and the token source, never the token', async () => {
    const source = tokenCommand('doctor');
    answer = (record) =>
      record.headers['authorization'] !== `Bearer ${source.token(1)}`
        ? refused(record)
        : record.url === '/v1/models'
          ? step.json({
              object: 'list',
              data: [{ id: 'qwen3-8b', object: 'model', created: 1, owned_by: 'vllm' }],
            })
          : record.url === '/v1/chat/completions'
            ? step.json({
                id: 'chatcmpl-doctor',
                object: 'chat.completion',
                created: 1,
                model: 'qwen3-8b',
                choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
                usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
              })
            : step.json({ detail: 'Not Found' }, { status: 404 });
    const result = await doctor({
      TPX_OAUTH_TOKEN_COMMAND: source.command,
      TPX_BASE_URL: `${server.url}/v1`,
      TPX_DIALECT: 'vllm',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('provider: tpx');
    expect(result.stdout).toContain('dialect: vllm (TPX_DIALECT is set)');
    expect(result.stdout).toContain('token: from TPX_OAUTH_TOKEN_COMMAND (command)');
    expect(result.stdout).toContain("claude-sonnet-5-5 → qwen3-8b (the upstream's only model)");
    expect(result.stdout).toContain('all checks passed');
    expect(result.stdout + result.stderr).not.toContain(source.token(1));
  });

  it('reports refused credentials as MODEL_EAUTH with a fix', async () => {
    const file = join(tempDir, 'doctor-token');
    writeFileSync(file, 'doctor-file-secret-88');
    answer = refused;
    const result = await doctor({ TPX_OAUTH_TOKEN_FILE: file, TPX_BASE_URL: `${server.url}/v1` });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('dialect: openai-generic');
    expect(result.stdout).toContain('token: from TPX_OAUTH_TOKEN_FILE (file)');
    expect(result.stdout).toContain('refused the bearer token from TPX_OAUTH_TOKEN_FILE');
    expect(result.stdout).toContain('refused the credentials');
    expect(result.stdout + result.stderr).not.toContain('doctor-file-secret-88');
  });
});
