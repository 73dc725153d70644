/**
 * `--wire` as a process: every command that talks upstream (`send`, `serve`, `doctor`, `claude`) takes
 * it as it takes `TPX_WIRE`, against `tpx mock-model`'s two endpoints on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { runTpx, startTpxServe, STAND_IN } from './cli-process.js';

const TOKEN = 'wire-flag-token-5c1d';
let mock: MockModelServer;

beforeAll(async () => {
  mock = await startMockModel({ token: TOKEN });
});
afterAll(async () => {
  await mock.close();
});

/** The paths of the exchanges (POSTs) the mock model received since `before` requests; probes left out. */
function exchangePaths(before: number): string[] {
  return mock.requests
    .slice(before)
    .filter((request) => request.method === 'POST')
    .map((request) => request.path);
}

const request = JSON.stringify({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'Hi' }] });

describe('--wire', () => {
  it('tpx send --wire responses posts to /v1/responses; without it, to /v1/chat/completions', async () => {
    const env = { TPX_BASE_URL: mock.url, TPX_OAUTH_TOKEN: TOKEN };
    let before = mock.requests.length;
    const viaResponses = await runTpx(['send', '--wire', 'responses', '-'], env, { input: request });
    expect(viaResponses.stderr).toBe('');
    expect(viaResponses.code).toBe(0);
    expect(JSON.parse(viaResponses.stdout)).toMatchObject({
      content: [{ type: 'text', text: 'You said: Hi' }],
    });
    expect(exchangePaths(before)).toEqual(['/v1/responses']);

    before = mock.requests.length;
    const viaChat = await runTpx(['send', '-'], env, { input: request });
    expect(viaChat.code).toBe(0);
    expect(exchangePaths(before)).toEqual(['/v1/chat/completions']);
  });

  it('the flag wins over TPX_WIRE, and a value that is not a wire is a usage error naming the flag', async () => {
    const env = { TPX_BASE_URL: mock.url, TPX_OAUTH_TOKEN: TOKEN, TPX_WIRE: 'responses' };
    const before = mock.requests.length;
    const result = await runTpx(['send', '--wire', 'chat', '--stream', '-'], env, { input: request });
    expect(result.code).toBe(0);
    expect(exchangePaths(before)).toEqual(['/v1/chat/completions']);

    const wrong = await runTpx(['send', '--wire', 'grpc', '-'], env, { input: request });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--wire must be "chat" or "responses", got "grpc"');
  });

  it('tpx serve --wire responses names the wire at start-up and serves Messages over /v1/responses', async () => {
    const serve = await startTpxServe(['--wire', 'responses', '--base-url', mock.url, '--token', TOKEN], {});
    try {
      expect(serve.stderr()).toMatch(/wire: responses \(TPX_WIRE is set\)/);
      const before = mock.requests.length;
      const answer = await fetch(`${serve.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        // The proxy maps model names against the upstream's list: ask for the one it serves.
        body: JSON.stringify({ ...JSON.parse(request), model: 'tpx-mock-1' }),
      });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ content: [{ type: 'text', text: 'You said: Hi' }] });
      expect(exchangePaths(before)).toEqual(['/v1/responses']);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
  });

  it('tpx doctor --wire responses checks the Responses endpoint and passes', async () => {
    const before = mock.requests.length;
    const result = await runTpx(
      ['doctor', '--wire', 'responses', '--base-url', mock.url, '--token', TOKEN],
      {},
    );
    expect(result.stdout).toContain(`chat: POST ${mock.url}/responses (model claude-sonnet-5-5`);
    expect(result.stdout).toContain('all checks passed');
    expect(result.code).toBe(0);
    expect(exchangePaths(before)).toEqual(['/v1/responses']);
  });

  it('tpx claude --wire responses runs a Claude Code-shaped session over /v1/responses to its end', async () => {
    const before = mock.requests.length;
    const result = await runTpx(
      [
        'claude',
        '--wire',
        'responses',
        '--base-url',
        mock.url,
        '--token',
        TOKEN,
        '--claude-bin',
        STAND_IN,
        '-p',
        'look around',
      ],
      {},
    );
    expect(result.stderr).toContain('stand-in: 2 turn(s), 1 tool round(s), stop_reason end_turn');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('The tools answered: Glob');
    const paths = exchangePaths(before);
    expect(paths.length).toBeGreaterThan(0);
    expect(new Set(paths)).toEqual(new Set(['/v1/responses']));
  });
});
