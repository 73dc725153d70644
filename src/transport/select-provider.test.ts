import { describe, expect, it } from 'vitest';
import { selectProvider } from './select-provider.js';

describe('selectProvider does no I/O', () => {
  it('names a token file without reading it: a missing file is the token source’s to report', () => {
    const config = selectProvider(
      {},
      { TPX_OAUTH_TOKEN_FILE: '/nonexistent/tpx-token', TPX_BASE_URL: 'http://127.0.0.1:8000/v1' },
    );
    expect(config.provider).toBe('tpx');
    expect(config.tpx?.tokenSpec).toStrictEqual({
      kind: 'file',
      origin: 'TPX_OAUTH_TOKEN_FILE',
      path: '/nonexistent/tpx-token',
    });
  });

  it('names a token command without running it', () => {
    const config = selectProvider(
      { tpxTokenCommand: 'exit 1' },
      { TPX_BASE_URL: 'http://127.0.0.1:8000/v1' },
    );
    expect(config.tpx?.tokenSpec).toStrictEqual({
      kind: 'command',
      origin: 'the tpxTokenCommand option',
      command: 'exit 1',
      timeoutMs: 10_000,
    });
  });
});
