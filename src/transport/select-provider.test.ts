import { describe, expect, it } from 'vitest';
import { selectProvider, type ResolvedConfig, type TpxSelection } from './select-provider.js';

const BASE_URL = 'http://127.0.0.1:8000/v1';

function tpxSelection(config: ResolvedConfig): TpxSelection {
  if (config.provider !== 'tpx') throw new Error(`expected the tpx provider, got ${config.provider}`);
  return config.tpx;
}

describe('selectProvider does no I/O', () => {
  it('names a token file without reading it: a missing file is the token source’s to report', () => {
    const config = selectProvider(
      {},
      { TPX_OAUTH_TOKEN_FILE: '/nonexistent/tpx-token', TPX_BASE_URL: BASE_URL },
    );
    expect(tpxSelection(config).tokenSpec).toStrictEqual({
      kind: 'file',
      origin: 'TPX_OAUTH_TOKEN_FILE',
      path: '/nonexistent/tpx-token',
    });
  });

  it('names a token command without running it', () => {
    const config = selectProvider({ tpxTokenCommand: 'exit 1' }, { TPX_BASE_URL: BASE_URL });
    expect(tpxSelection(config).tokenSpec).toStrictEqual({
      kind: 'command',
      origin: 'the tpxTokenCommand option',
      command: 'exit 1',
      timeoutMs: 10_000,
    });
  });
});

describe('selectProvider: the configuration of the chosen provider only', () => {
  it('gives anthropic its key and base URL, and nothing for tpx', () => {
    const config = selectProvider(
      {},
      { ANTHROPIC_API_KEY: 'sk-test', TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: BASE_URL },
    );
    expect(config).toStrictEqual({
      provider: 'anthropic',
      reason: 'ANTHROPIC_API_KEY is set',
      anthropic: { apiKey: 'sk-test', baseUrl: 'https://api.anthropic.com' },
    });
  });

  it('gives tpx its selection, and nothing for anthropic', () => {
    const config = selectProvider({}, { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: BASE_URL });
    expect(Object.keys(config).sort()).toStrictEqual(['provider', 'reason', 'tpx']);
    expect(tpxSelection(config).baseUrl).toBe(BASE_URL);
  });

  it('gives none only a reason', () => {
    expect(Object.keys(selectProvider({}, {})).sort()).toStrictEqual(['provider', 'reason']);
  });
});

/** The `MODEL_ECONFIG` message `selectProvider` throws for `options` and `env`. */
function refusal(options: Parameters<typeof selectProvider>[0], env: Record<string, string | undefined>) {
  try {
    selectProvider(options, env);
  } catch (error) {
    expect(error).toMatchObject({ code: 'MODEL_ECONFIG', status: 500 });
    return (error as Error).message;
  }
  throw new Error('expected selectProvider to refuse the configuration');
}

describe('selectProvider: what decided, in the reason', () => {
  it('names the key variable, or the option, that selected anthropic', () => {
    expect(selectProvider({}, { ANTHROPIC_API_KEY: ' sk-env ' })).toStrictEqual({
      provider: 'anthropic',
      reason: 'ANTHROPIC_API_KEY is set',
      anthropic: { apiKey: 'sk-env', baseUrl: 'https://api.anthropic.com' },
    });
    expect(selectProvider({ anthropicApiKey: ' sk-option ' }, { ANTHROPIC_API_KEY: 'sk-env' })).toStrictEqual(
      {
        provider: 'anthropic',
        reason: 'the anthropicApiKey option is set',
        anthropic: { apiKey: 'sk-option', baseUrl: 'https://api.anthropic.com' },
      },
    );
  });

  it('takes the anthropicBaseUrl option over ANTHROPIC_BASE_URL, without its trailing slashes', () => {
    const env = { ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: 'http://env.test/' };
    expect(selectProvider({}, env)).toMatchObject({ anthropic: { baseUrl: 'http://env.test' } });
    expect(selectProvider({ anthropicBaseUrl: 'http://option.test//' }, env)).toMatchObject({
      anthropic: { baseUrl: 'http://option.test' },
    });
  });

  it('selects tpx from a static token, naming it and the missing key', () => {
    expect(selectProvider({}, { TPX_OAUTH_TOKEN: ' tok ', TPX_BASE_URL: BASE_URL })).toStrictEqual({
      provider: 'tpx',
      reason: 'TPX_OAUTH_TOKEN is set and ANTHROPIC_API_KEY is not',
      tpx: {
        tokenSpec: { kind: 'static', origin: 'TPX_OAUTH_TOKEN', token: 'tok' },
        baseUrl: BASE_URL,
        model: undefined,
        tokenSource: 'TPX_OAUTH_TOKEN is set',
        dialect: 'openai-generic',
        dialectReason:
          'the TPX_BASE_URL host 127.0.0.1 is not a known service, so the profile for a generic ' +
          'OpenAI-compatible server applies; set TPX_DIALECT to choose another',
        azureApiVersion: '2024-10-21',
        wire: 'chat',
        wireReason: 'the default of the openai-generic dialect',
        textToolCalls: true,
      },
    });
  });

  it('says that credential options were used before a key in the environment', () => {
    const config = selectProvider(
      { tpxToken: 'tok', tpxBaseUrl: BASE_URL },
      { ANTHROPIC_API_KEY: 'sk-env', TPX_OAUTH_TOKEN: 'env-token' },
    );
    expect(config.reason).toBe(
      'the tpxToken option is set, and credential options are used before ANTHROPIC_API_KEY in the environment',
    );
    expect(tpxSelection(config).tokenSpec).toStrictEqual({
      kind: 'static',
      origin: 'the tpxToken option',
      token: 'tok',
    });
  });

  it('does not mention the environment key when it is blank', () => {
    const config = selectProvider({ tpxToken: 'tok', tpxBaseUrl: BASE_URL }, { ANTHROPIC_API_KEY: '  ' });
    expect(config.reason).toBe('the tpxToken option is set and ANTHROPIC_API_KEY is not');
  });

  it('reads every credential variable of the environment when no credential option is passed', () => {
    expect(selectProvider({ tpxBaseUrl: BASE_URL }, { TPX_OAUTH_TOKEN_FILE: '/run/token' }).reason).toBe(
      'TPX_OAUTH_TOKEN_FILE is set and ANTHROPIC_API_KEY is not',
    );
    expect(
      tpxSelection(selectProvider({ tpxBaseUrl: BASE_URL }, { TPX_OAUTH_TOKEN_COMMAND: 'print-token' }))
        .tokenSpec,
    ).toStrictEqual({
      kind: 'command',
      origin: 'TPX_OAUTH_TOKEN_COMMAND',
      command: 'print-token',
      timeoutMs: 10_000,
    });
  });

  it('sets aside each credential variable when any credential option is passed', () => {
    const env = {
      ANTHROPIC_API_KEY: 'sk-env',
      TPX_OAUTH_TOKEN: 'env-token',
      TPX_OAUTH_TOKEN_FILE: '/env/token',
      TPX_OAUTH_TOKEN_COMMAND: 'env-command',
      TPX_BASE_URL: BASE_URL,
    };
    for (const options of [
      { tpxToken: 'tok' },
      { tpxTokenFile: '/option/token' },
      { tpxTokenCommand: 'option-command' },
    ]) {
      const tokenSpec = tpxSelection(selectProvider(options, env)).tokenSpec;
      expect(JSON.stringify(tokenSpec)).not.toMatch(/env/);
    }
    expect(tpxSelection(selectProvider({ tpxTokenFile: '/option/token' }, env)).tokenSpec).toStrictEqual({
      kind: 'file',
      origin: 'the tpxTokenFile option',
      path: '/option/token',
    });
    expect(selectProvider({ anthropicApiKey: 'sk-option' }, env)).toMatchObject({
      anthropic: { apiKey: 'sk-option' },
    });
  });

  it('keeps a blank credential option from setting the environment aside', () => {
    expect(selectProvider({ tpxTokenCommand: ' ' }, { ANTHROPIC_API_KEY: 'sk-env' }).provider).toBe(
      'anthropic',
    );
  });

  it('takes the static token over the file, and the file over the command', () => {
    const all = { TPX_OAUTH_TOKEN: 'tok', TPX_OAUTH_TOKEN_FILE: '/f', TPX_OAUTH_TOKEN_COMMAND: 'c' };
    expect(tpxSelection(selectProvider({ tpxBaseUrl: BASE_URL }, all)).tokenSpec.kind).toBe('static');
    const { TPX_OAUTH_TOKEN: _token, ...fileAndCommand } = all;
    expect(tpxSelection(selectProvider({ tpxBaseUrl: BASE_URL }, fileAndCommand)).tokenSpec.kind).toBe(
      'file',
    );
  });

  it('names the model, the dialect and the wire that were set', () => {
    const tpx = tpxSelection(
      selectProvider(
        {},
        {
          TPX_OAUTH_TOKEN: 'tok',
          TPX_BASE_URL: BASE_URL,
          TPX_MODEL: ' qwen3 ',
          TPX_DIALECT: ' VLLM ',
          TPX_WIRE: ' Responses ',
          TPX_AZURE_API_VERSION: '2025-04-01-preview',
        },
      ),
    );
    expect([
      tpx.model,
      tpx.dialect,
      tpx.dialectReason,
      tpx.wire,
      tpx.wireReason,
      tpx.azureApiVersion,
    ]).toStrictEqual([
      'qwen3',
      'vllm',
      'TPX_DIALECT is set',
      'responses',
      'TPX_WIRE is set',
      '2025-04-01-preview',
    ]);
    const fromOptions = tpxSelection(
      selectProvider(
        { tpxToken: 'tok', tpxBaseUrl: BASE_URL, tpxDialect: 'vllm', tpxWire: 'chat', tpxModel: 'm' },
        { TPX_DIALECT: 'mistral', TPX_WIRE: 'responses', TPX_MODEL: 'other' },
      ),
    );
    expect([
      fromOptions.model,
      fromOptions.dialectReason,
      fromOptions.wire,
      fromOptions.wireReason,
    ]).toStrictEqual(['m', 'the tpxDialect option is set', 'chat', 'the tpxWire option is set']);
  });

  it('detects the dialect from the base URL host and says so', () => {
    const tpx = tpxSelection(
      selectProvider({}, { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: 'https://api.mistral.ai/v1' }),
    );
    expect([tpx.dialect, tpx.dialectReason]).toStrictEqual([
      'mistral',
      'detected from the TPX_BASE_URL host api.mistral.ai',
    ]);
  });

  it('gives none a reason naming every credential variable', () => {
    expect(selectProvider({}, {})).toStrictEqual({
      provider: 'none',
      reason:
        'no credentials: neither ANTHROPIC_API_KEY nor TPX_OAUTH_TOKEN / TPX_OAUTH_TOKEN_FILE / TPX_OAUTH_TOKEN_COMMAND is set',
    });
  });
});

describe('selectProvider: the token command timeout', () => {
  const command = (options: Parameters<typeof selectProvider>[0], env: Record<string, string>) =>
    tpxSelection(
      selectProvider({ tpxBaseUrl: BASE_URL, ...options }, { TPX_OAUTH_TOKEN_COMMAND: 'c', ...env }),
    ).tokenSpec;

  it('takes the option over TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS over the default of 10 s', () => {
    expect(command({}, {})).toMatchObject({ timeoutMs: 10_000 });
    expect(command({}, { TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS: ' 2500 ' })).toMatchObject({ timeoutMs: 2500 });
    expect(command({}, { TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS: ' ' })).toMatchObject({ timeoutMs: 10_000 });
    expect(
      command({ tpxTokenCommandTimeoutMs: 1 }, { TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS: '2500' }),
    ).toMatchObject({ timeoutMs: 1 });
  });

  it('refuses a timeout that is not a whole number above 0, naming where it came from', () => {
    for (const bad of [0, -1, 1.5]) {
      expect(
        refusal({ tpxBaseUrl: BASE_URL, tpxTokenCommandTimeoutMs: bad }, { TPX_OAUTH_TOKEN_COMMAND: 'c' }),
      ).toBe('tpxTokenCommandTimeoutMs must be a whole number of milliseconds above 0');
    }
    expect(
      refusal(
        { tpxBaseUrl: BASE_URL },
        { TPX_OAUTH_TOKEN_COMMAND: 'c', TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS: 'soon' },
      ),
    ).toBe('TPX_OAUTH_TOKEN_COMMAND_TIMEOUT_MS must be a whole number of milliseconds above 0');
  });
});

describe('selectProvider: configurations that cannot work', () => {
  it('refuses a token without a base URL, saying what to set', () => {
    expect(refusal({}, { TPX_OAUTH_TOKEN: 'tok' })).toBe(
      'an OAuth token is set but TPX_BASE_URL is not: set TPX_BASE_URL (or the tpxBaseUrl option) to the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1',
    );
  });

  it('refuses a base URL that is not a URL, or not http(s), naming the variable', () => {
    expect(refusal({}, { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: 'localhost:8000' })).toBe(
      'TPX_BASE_URL must be an http:// or https:// URL',
    );
    expect(refusal({}, { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: 'not a url' })).toBe(
      'TPX_BASE_URL is not a valid URL; expected e.g. http://127.0.0.1:8000/v1',
    );
    expect(refusal({}, { ANTHROPIC_API_KEY: 'sk', ANTHROPIC_BASE_URL: 'ftp://host' })).toBe(
      'ANTHROPIC_BASE_URL must be an http:// or https:// URL',
    );
    expect(
      selectProvider({}, { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: 'https://host.test/v1' }),
    ).toMatchObject({
      tpx: { baseUrl: 'https://host.test/v1' },
    });
  });

  it('names the option, not the variable, when the base URL came from the option', () => {
    const env = { TPX_BASE_URL: BASE_URL, ANTHROPIC_BASE_URL: 'https://env.test' };
    expect(refusal({ tpxToken: 'tok', tpxBaseUrl: 'localhost:8000' }, env)).toBe(
      'the tpxBaseUrl option must be an http:// or https:// URL',
    );
    expect(refusal({ tpxToken: 'tok', tpxBaseUrl: 'not a url' }, env)).toBe(
      'the tpxBaseUrl option is not a valid URL; expected e.g. http://127.0.0.1:8000/v1',
    );
    expect(refusal({ anthropicApiKey: 'sk', anthropicBaseUrl: 'ftp://host' }, env)).toBe(
      'the anthropicBaseUrl option must be an http:// or https:// URL',
    );
  });

  it('refuses an Azure api-version that does not look like one, naming the variable or the option', () => {
    const env = { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: BASE_URL };
    expect(refusal({}, { ...env, TPX_AZURE_API_VERSION: '2024 10' })).toBe(
      'TPX_AZURE_API_VERSION must look like 2024-10-21 or 2025-04-01-preview, got "2024 10"',
    );
    expect(refusal({ tpxAzureApiVersion: 'v1?x=1' }, env)).toBe(
      'the tpxAzureApiVersion option must look like 2024-10-21 or 2025-04-01-preview, got "v1?x=1"',
    );
    expect(refusal({}, { ...env, TPX_AZURE_API_VERSION: 'ok-1.0_a x' })).toMatch(/must look like/);
  });

  it('refuses a wire other than chat or responses, and responses with vertex', () => {
    const env = { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: BASE_URL };
    expect(refusal({}, { ...env, TPX_WIRE: 'grpc' })).toBe(
      'TPX_WIRE must be "chat" (Chat Completions) or "responses" (the OpenAI Responses API), got "grpc"',
    );
    expect(refusal({ tpxWire: 'responses', tpxDialect: 'vertex' }, env)).toBe(
      'the tpxWire option is "responses", but Vertex AI serves no Responses API; use the chat wire with the vertex dialect',
    );
  });

  it('refuses an unknown TPX_DIALECT, naming the variable', () => {
    expect(refusal({}, { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: BASE_URL, TPX_DIALECT: 'nope' })).toMatch(
      /^TPX_DIALECT is "nope", which is not a known dialect/,
    );
  });

  it('takes the chat wire with the vertex dialect', () => {
    const config = selectProvider(
      { tpxToken: 'tok', tpxBaseUrl: BASE_URL, tpxDialect: 'vertex', tpxWire: 'chat' },
      {},
    );
    expect([tpxSelection(config).wire, tpxSelection(config).wireReason]).toStrictEqual([
      'chat',
      'the tpxWire option is set',
    ]);
  });

  it('refuses an unknown dialect, naming the option', () => {
    expect(refusal({ tpxDialect: 'nope' }, { TPX_OAUTH_TOKEN: 'tok', TPX_BASE_URL: BASE_URL })).toMatch(
      /^the tpxDialect option is "nope", which is not a known dialect/,
    );
  });
});
