import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createTransport,
  isTransportError,
  type ModelTransport,
  type TransportError,
} from '../../src/index.js';
import {
  helloRequest,
  startScriptedServer,
  step,
  textMessage,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

const KEY = 'sk-ant-secret-key-0123456789';
const TOKEN = 'oauth-secret-token-abcdef';
const TPX_BASE_URL = 'http://127.0.0.1:9/v1';

/** Calls `create` and returns the TransportError it throws. */
function configError(create: () => unknown): TransportError {
  try {
    create();
  } catch (error) {
    if (isTransportError(error)) return error;
    throw error;
  }
  throw new Error('expected createTransport to throw a TransportError');
}

/** The chat completion a tpx endpoint answers with. */
function chatCompletion() {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  };
}

const transports: ModelTransport[] = [];
function track(transport: ModelTransport): ModelTransport {
  transports.push(transport);
  return transport;
}

let tempDir: string;
beforeAll(() => {
  tempDir = mkdtempSync(join(tmpdir(), 'tpx-selection-'));
});
afterAll(() => {
  rmSync(tempDir, { recursive: true, force: true });
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(transports.splice(0).map((transport) => transport.close()));
});

describe('the selection table', () => {
  it.each([
    {
      credentials: 'a key and a token',
      env: { ANTHROPIC_API_KEY: KEY, TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL },
      provider: 'anthropic',
      variable: 'ANTHROPIC_API_KEY',
    },
    {
      credentials: 'a key only',
      env: { ANTHROPIC_API_KEY: KEY },
      provider: 'anthropic',
      variable: 'ANTHROPIC_API_KEY',
    },
    {
      credentials: 'a token and TPX_BASE_URL',
      env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL },
      provider: 'tpx',
      variable: 'TPX_OAUTH_TOKEN',
    },
    { credentials: 'no credentials', env: {}, provider: 'none', variable: 'ANTHROPIC_API_KEY' },
  ])('selects $provider with $credentials, naming $variable in the reason', ({ env, provider, variable }) => {
    const transport = track(createTransport({ env }));
    expect(transport.provider).toBe(provider);
    expect(transport.selection.provider).toBe(provider);
    expect(transport.selection.reason).toContain(variable);
  });

  it('says in the reason that the key is missing when a token selects tpx', () => {
    const transport = track(createTransport({ env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL } }));
    expect(transport.selection.reason).toMatch(/TPX_OAUTH_TOKEN is set/);
    expect(transport.selection.reason).toMatch(/ANTHROPIC_API_KEY is not/);
  });

  it('says in the reason that neither credential is set when it selects none', () => {
    const transport = track(createTransport({ env: {} }));
    expect(transport.selection.reason).toContain('ANTHROPIC_API_KEY');
    expect(transport.selection.reason).toContain('TPX_OAUTH_TOKEN');
  });

  it.each(['', ' ', '\t', '\n  \r\n'])('treats a key of %j as absent, so a token selects tpx', (blank) => {
    const transport = track(
      createTransport({ env: { ANTHROPIC_API_KEY: blank, TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL } }),
    );
    expect(transport.provider).toBe('tpx');
  });

  it.each(['', ' ', '\t\n'])('treats a key and a token of %j as absent, so nothing is selected', (blank) => {
    const transport = track(
      createTransport({
        env: { ANTHROPIC_API_KEY: blank, TPX_OAUTH_TOKEN: blank, TPX_OAUTH_TOKEN_FILE: blank, TPX_BASE_URL },
      }),
    );
    expect(transport.provider).toBe('none');
  });

  it('treats a blank explicit key option as absent and falls back to the environment', () => {
    const transport = track(createTransport({ anthropicApiKey: '  ', env: { ANTHROPIC_API_KEY: KEY } }));
    expect(transport.provider).toBe('anthropic');
    expect(transport.selection.reason).toBe('ANTHROPIC_API_KEY is set');
  });
});

describe('explicit options', () => {
  let server: ScriptedServer;
  let decoy: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer();
    decoy = await startScriptedServer();
  });
  afterAll(async () => {
    await server.close();
    await decoy.close();
  });

  it('selects anthropic from the anthropicApiKey option, even when the environment holds only a token', () => {
    const transport = track(
      createTransport({ anthropicApiKey: KEY, env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL } }),
    );
    expect(transport.provider).toBe('anthropic');
    expect(transport.selection.reason).toBe('the anthropicApiKey option is set');
  });

  it('selects tpx from the tpxToken and tpxBaseUrl options when the environment has nothing', () => {
    const transport = track(createTransport({ tpxToken: TOKEN, tpxBaseUrl: TPX_BASE_URL, env: {} }));
    expect(transport.provider).toBe('tpx');
    expect(transport.selection.reason).toContain('tpxToken');
  });

  it.each([
    ['tpxToken', { tpxToken: TOKEN }],
    ['tpxTokenCommand', { tpxTokenCommand: 'printf token' }],
  ] as const)(
    'selects tpx from the %s option even when ANTHROPIC_API_KEY is in the environment',
    (option, credentials) => {
      const transport = track(
        createTransport({
          ...credentials,
          tpxBaseUrl: TPX_BASE_URL,
          env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
        }),
      );
      expect(transport.provider).toBe('tpx');
      expect(transport.selection.reason).toContain(`the ${option} option is set`);
      expect(transport.selection.reason).not.toContain(KEY);
    },
  );

  it('selects tpx from the tpxTokenFile option even when ANTHROPIC_API_KEY is in the environment', () => {
    const file = join(tempDir, 'explicit-token');
    writeFileSync(file, `${TOKEN}\n`);
    const transport = track(
      createTransport({ tpxTokenFile: file, tpxBaseUrl: TPX_BASE_URL, env: { ANTHROPIC_API_KEY: KEY } }),
    );
    expect(transport.provider).toBe('tpx');
    expect(transport.selection.tokenSource?.origin).toBe('the tpxTokenFile option');
  });

  it('sends the explicit tpx token to the tpx endpoint, and nothing to the anthropic one of the environment', async () => {
    server.push(step.json(chatCompletion()));
    const transport = track(
      createTransport({
        tpxToken: 'tpx-option-token',
        tpxBaseUrl: `${server.url}/v1`,
        env: { ANTHROPIC_API_KEY: 'sk-env-key', ANTHROPIC_BASE_URL: decoy.url },
        maxRetries: 0,
      }),
    );
    const before = server.requests.length;
    await transport.send(helloRequest());
    expect(server.requests).toHaveLength(before + 1);
    expect(server.requests.at(-1)!.headers['authorization']).toBe('Bearer tpx-option-token');
    expect(server.requests.at(-1)!.headers['x-api-key']).toBeUndefined();
    expect(decoy.requests).toHaveLength(0);
  });

  it('takes the key over the token when both are passed as options, as the selection table says', () => {
    const transport = track(
      createTransport({ anthropicApiKey: KEY, tpxToken: TOKEN, tpxBaseUrl: TPX_BASE_URL, env: {} }),
    );
    expect(transport.provider).toBe('anthropic');
  });

  it('reads the credentials of the environment when no credential option is passed', () => {
    const transport = track(
      createTransport({ tpxBaseUrl: TPX_BASE_URL, env: { ANTHROPIC_API_KEY: KEY, TPX_OAUTH_TOKEN: TOKEN } }),
    );
    expect(transport.provider).toBe('anthropic');
    expect(transport.selection.reason).toBe('ANTHROPIC_API_KEY is set');
  });

  it('sends the option key to the option base URL rather than the ones in the environment', async () => {
    server.push(step.json(textMessage()));
    const transport = track(
      createTransport({
        anthropicApiKey: 'sk-option-key',
        anthropicBaseUrl: server.url,
        env: { ANTHROPIC_API_KEY: 'sk-env-key', ANTHROPIC_BASE_URL: decoy.url },
        maxRetries: 0,
      }),
    );
    const before = server.requests.length;
    await expect(transport.send(helloRequest())).resolves.toEqual(textMessage());
    expect(server.requests).toHaveLength(before + 1);
    expect(server.requests.at(-1)!.headers['x-api-key']).toBe('sk-option-key');
    expect(decoy.requests).toHaveLength(0);
  });
});

describe('the token file', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('selects tpx from TPX_OAUTH_TOKEN_FILE and sends the token it holds, trimmed, as a bearer token', async () => {
    const file = join(tempDir, 'token');
    writeFileSync(file, `  ${TOKEN}\n`);
    server.push(step.json(chatCompletion()));
    const transport = track(
      createTransport({
        env: { TPX_OAUTH_TOKEN_FILE: file, TPX_BASE_URL: `${server.url}/v1` },
        maxRetries: 0,
      }),
    );
    expect(transport.provider).toBe('tpx');
    expect(transport.selection.reason).toContain('TPX_OAUTH_TOKEN_FILE');
    expect(transport.selection.reason).not.toContain(TOKEN);

    const message = await transport.send(helloRequest());
    expect(message.content).toEqual([{ type: 'text', text: 'Hi there' }]);
    const recorded = server.requests.at(-1)!;
    expect(recorded.url).toBe('/v1/chat/completions');
    expect(recorded.headers['authorization']).toBe(`Bearer ${TOKEN}`);
  });

  it('prefers TPX_OAUTH_TOKEN over TPX_OAUTH_TOKEN_FILE, without reading the file', () => {
    const transport = track(
      createTransport({
        env: { TPX_OAUTH_TOKEN: TOKEN, TPX_OAUTH_TOKEN_FILE: join(tempDir, 'does-not-exist'), TPX_BASE_URL },
      }),
    );
    expect(transport.provider).toBe('tpx');
    expect(transport.selection.reason).toContain('TPX_OAUTH_TOKEN is set');
  });

  it('refuses a token file that does not exist with MODEL_ECONFIG naming TPX_OAUTH_TOKEN_FILE', () => {
    const error = configError(() =>
      createTransport({ env: { TPX_OAUTH_TOKEN_FILE: join(tempDir, 'missing'), TPX_BASE_URL } }),
    );
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toContain('TPX_OAUTH_TOKEN_FILE');
    expect(error.message).toContain('ENOENT');
  });

  it('refuses a token file that is a directory with MODEL_ECONFIG', () => {
    const error = configError(() =>
      createTransport({ env: { TPX_OAUTH_TOKEN_FILE: tempDir, TPX_BASE_URL } }),
    );
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toContain('TPX_OAUTH_TOKEN_FILE');
  });

  it('refuses a missing token file with MODEL_ECONFIG naming the option and the reason, not the path', () => {
    const error = configError(() =>
      createTransport({ tpxTokenFile: join(tempDir, 'no-such-token'), env: { TPX_BASE_URL } }),
    );
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toBe('the tpxTokenFile option names a file that cannot be read (ENOENT)');
  });

  it.each(['', '   \n\t\n'])('refuses a token file holding only %j with MODEL_ECONFIG', (content) => {
    const file = join(tempDir, 'empty-token');
    writeFileSync(file, content);
    const error = configError(() => createTransport({ env: { TPX_OAUTH_TOKEN_FILE: file, TPX_BASE_URL } }));
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toMatch(/TPX_OAUTH_TOKEN_FILE names an empty file/);
  });
});

describe('configuration errors', () => {
  it('refuses a token without TPX_BASE_URL with MODEL_ECONFIG naming TPX_BASE_URL and not the token', () => {
    const error = configError(() => createTransport({ env: { TPX_OAUTH_TOKEN: TOKEN } }));
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toContain('TPX_BASE_URL');
    expect(error.message).not.toContain(TOKEN);
    expect(JSON.stringify(error.body)).not.toContain(TOKEN);
  });

  it('refuses a blank TPX_BASE_URL as if it were missing', () => {
    const error = configError(() => createTransport({ env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: '  ' } }));
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toContain('TPX_BASE_URL');
  });

  it.each(['not a url', 'ftp://127.0.0.1/v1'])(
    'refuses TPX_BASE_URL %j with MODEL_ECONFIG naming the variable',
    (url) => {
      const error = configError(() =>
        createTransport({ env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: url } }),
      );
      expect(error.code).toBe('MODEL_ECONFIG');
      expect(error.message).toContain('TPX_BASE_URL');
    },
  );

  it('refuses an ANTHROPIC_BASE_URL that is not a URL with MODEL_ECONFIG and does not leak the key', () => {
    const error = configError(() =>
      createTransport({ env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: 'nope' } }),
    );
    expect(error.code).toBe('MODEL_ECONFIG');
    expect(error.message).toContain('ANTHROPIC_BASE_URL');
    expect(error.message).not.toContain(KEY);
  });
});

describe('the selection reason', () => {
  it.each([
    { env: { ANTHROPIC_API_KEY: KEY, TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL } },
    { env: { ANTHROPIC_API_KEY: ` ${KEY} ` } },
    { env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL } },
    { env: {}, anthropicApiKey: KEY },
    { env: {}, tpxToken: TOKEN, tpxBaseUrl: TPX_BASE_URL },
  ])('never contains the key or the token (case %#)', (options) => {
    const transport = track(createTransport(options));
    const visible = JSON.stringify({
      selection: transport.selection,
      provider: transport.provider,
      keys: Object.keys(transport),
    });
    expect(visible).not.toContain(KEY);
    expect(visible).not.toContain(TOKEN);
    expect(transport.selection.reason).toMatch(
      /(ANTHROPIC_API_KEY|TPX_OAUTH_TOKEN|anthropicApiKey|tpxToken)/,
    );
  });
});

describe('frozen selection', () => {
  it('keeps provider and selection frozen: assigning throws and changes nothing', () => {
    const transport = track(createTransport({ env: { ANTHROPIC_API_KEY: KEY } }));
    expect(Object.isFrozen(transport)).toBe(true);
    expect(Object.isFrozen(transport.selection)).toBe(true);
    expect(() => {
      (transport as { provider: string }).provider = 'tpx';
    }).toThrow(TypeError);
    expect(() => {
      (transport.selection as { provider: string }).provider = 'none';
    }).toThrow(TypeError);
    expect(() => {
      (transport.selection as { reason: string }).reason = 'changed';
    }).toThrow(TypeError);
    expect(transport.provider).toBe('anthropic');
    expect(transport.selection).toEqual({ provider: 'anthropic', reason: 'ANTHROPIC_API_KEY is set' });
  });
});

describe('environment changes after creation', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('keeps the provider and the key on the wire when the env object is mutated afterwards', async () => {
    const env: Record<string, string | undefined> = {
      ANTHROPIC_API_KEY: 'sk-original',
      ANTHROPIC_BASE_URL: server.url,
    };
    const transport = track(createTransport({ env, maxRetries: 0 }));
    env['ANTHROPIC_API_KEY'] = 'sk-replaced';
    env['ANTHROPIC_BASE_URL'] = 'http://127.0.0.1:9';
    delete env['ANTHROPIC_API_KEY'];
    env['TPX_OAUTH_TOKEN'] = TOKEN;
    env['TPX_BASE_URL'] = TPX_BASE_URL;

    expect(transport.provider).toBe('anthropic');
    expect(transport.selection.reason).toBe('ANTHROPIC_API_KEY is set');
    server.push(step.json(textMessage()));
    const before = server.requests.length;
    await expect(transport.send(helloRequest())).resolves.toEqual(textMessage());
    expect(server.requests).toHaveLength(before + 1);
    expect(server.requests.at(-1)!.headers['x-api-key']).toBe('sk-original');
  });

  it('reads process.env once when no env is given: later changes reach neither selection nor the wire', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-from-process');
    vi.stubEnv('ANTHROPIC_BASE_URL', server.url);
    const transport = track(createTransport({ maxRetries: 0 }));
    vi.stubEnv('ANTHROPIC_API_KEY', '');
    vi.stubEnv('ANTHROPIC_BASE_URL', 'http://127.0.0.1:9');

    expect(transport.provider).toBe('anthropic');
    server.push(step.json(textMessage()));
    const before = server.requests.length;
    await transport.send(helloRequest());
    expect(server.requests).toHaveLength(before + 1);
    expect(server.requests.at(-1)!.headers['x-api-key']).toBe('sk-from-process');
  });

  it('does not become none when every credential is removed from the env object', () => {
    const env: Record<string, string | undefined> = { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL };
    const transport = track(createTransport({ env }));
    for (const name of Object.keys(env)) delete env[name];
    expect(transport.provider).toBe('tpx');
    expect(transport.selection.provider).toBe('tpx');
  });
});

describe('base URLs ending in a slash', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it.each(['/v1/', '/v1//'])(
    'sends a tpx request to /v1/chat/completions when TPX_BASE_URL ends in %j',
    async (suffix) => {
      server.push(step.json(chatCompletion()));
      const transport = track(
        createTransport({
          env: { TPX_OAUTH_TOKEN: TOKEN, TPX_BASE_URL: `${server.url}${suffix}` },
          maxRetries: 0,
        }),
      );
      await transport.send(helloRequest());
      expect(server.requests.at(-1)!.url).toBe('/v1/chat/completions');
    },
  );

  it('sends an anthropic request to /v1/messages when ANTHROPIC_BASE_URL ends in a slash', async () => {
    server.push(step.json(textMessage()));
    const transport = track(
      createTransport({
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: `${server.url}/` },
        maxRetries: 0,
      }),
    );
    await transport.send(helloRequest());
    expect(server.requests.at(-1)!.url).toBe('/v1/messages');
  });
});
