/**
 * The CLI's configuration errors speak the CLI's language: a user who wrote `--base-url` (or set
 * `TPX_BASE_URL`) reads about `--base-url` and `TPX_BASE_URL`, never about the library's `tpxBaseUrl`
 * option, which they cannot pass. Run as a process, as a user would.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTpx } from './cli-process.js';

/** A library option name: `tpxBaseUrl`, `anthropicApiKey`, `timeoutMs`, `maxOutputTokens`, `modelMap`, … */
const LIBRARY_OPTION =
  /\b(?:tpx|anthropic)[A-Z]\w*|\b[a-z]+(?:[A-Z][a-z]+)*Ms\b|\bmaxOutputTokens\b|\bmodelMap\b/;

const REQUEST = join(mkdtempSync(join(tmpdir(), 'tpx-names-')), 'request.json');
writeFileSync(
  REQUEST,
  JSON.stringify({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
);

describe('CLI configuration errors name flags and variables', () => {
  it.each([
    ['send', ['send', '--token', 'local', REQUEST]],
    ['serve', ['serve', '--token', 'local', '--port', '0']],
    ['claude', ['claude', '--token', 'local']],
    ['doctor', ['doctor', '--token', 'local']],
  ])('%s: a token without a base URL names --base-url and TPX_BASE_URL', async (_name, args) => {
    const result = await runTpx(args);
    expect(result.code).toBe(2);
    const output = result.stdout + result.stderr;
    expect(output).toContain('--base-url');
    expect(output).toContain('TPX_BASE_URL');
    expect(output).not.toMatch(LIBRARY_OPTION);
  });

  it('names --base-url for a malformed URL given as that flag, and TPX_BASE_URL for one in the environment', async () => {
    const flag = await runTpx(['send', '--token', 'local', '--base-url', 'not a url', REQUEST]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--base-url is not a valid URL/);
    expect(flag.stderr).not.toMatch(LIBRARY_OPTION);
    const variable = await runTpx(['send', REQUEST], { TPX_OAUTH_TOKEN: 'local', TPX_BASE_URL: 'not a url' });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toMatch(/TPX_BASE_URL is not a valid URL/);
  });

  it('names --dialect for an unknown dialect given as that flag', async () => {
    const result = await runTpx([
      'send',
      '--token',
      'local',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--dialect',
      'nonesuch',
      REQUEST,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--dialect is "nonesuch", which is not a known dialect/);
    expect(result.stderr).not.toMatch(LIBRARY_OPTION);
  });
});
