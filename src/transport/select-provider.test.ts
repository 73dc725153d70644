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
