/**
 * `tpx claude` as a process, with a stand-in for Claude Code (`fixtures/claude-stand-in.mjs`, which
 * sends Claude Code-shaped Messages requests using the environment it was given): against
 * `tpx mock-model`'s server on loopback, and with small shell stand-ins for exit codes, arguments,
 * stdin and signals.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';
import { startScriptedServer, step } from '../helpers/scripted-server.js';
import { CLI, runTpx, STAND_IN } from './cli-process.js';

function script(body: string): string {
  const directory = mkdtempSync(join(tmpdir(), 'tpx-claude-'));
  const file = join(directory, 'claude');
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

describe('tpx claude', () => {
  let mock: MockModelServer;
  beforeAll(async () => {
    mock = await startMockModel({ token: 'upstream-token-7f3a' });
  });
  afterAll(async () => {
    await mock.close();
  });

  const upstream = () => ({ TPX_BASE_URL: mock.url, TPX_OAUTH_TOKEN: 'upstream-token-7f3a' });

  it('runs a Claude Code-shaped session against the mock model to its end: -p "…" completes', async () => {
    const before = mock.requests.length;
    const result = await runTpx(
      ['claude', '--claude-bin', STAND_IN, '-p', 'look around and say hi'],
      upstream(),
    );
    expect(result.stderr).toContain('stand-in: 2 turn(s), 1 tool round(s), stop_reason end_turn');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('The tools answered: Glob');
    expect(result.stderr).toMatch(/tpx claude: proxy on http:\/\/127\.0\.0\.1:\d+/);
    expect(result.stderr).toContain('upstream models: tpx-mock-1');
    expect(result.stderr + result.stdout).not.toContain('upstream-token-7f3a');
    const chats = mock.requests.slice(before).filter((request) => request.path.endsWith('/chat/completions'));
    // The title call, the tool round, the answer: the loop ends.
    expect(chats).toHaveLength(3);
    expect(chats.map((request) => (request.body as { model: string }).model)).toEqual([
      'tpx-mock-1',
      'tpx-mock-1',
      'tpx-mock-1',
    ]);
    // The tools called were read-only ones, with only their required fields.
    type Sent = {
      messages: { role: string; tool_calls?: { function: { name: string; arguments: string } }[] }[];
    };
    const calls = (chats[2]!.body as Sent).messages.find(
      (message) => message.role === 'assistant',
    )!.tool_calls!;
    expect(calls.map((call) => call.function.name)).toEqual(['Glob', 'Grep', 'Read']);
    expect(calls.map((call) => call.function.arguments)).toEqual([
      '{"pattern":"example"}',
      '{"pattern":"example"}',
      '{"file_path":"example"}',
    ]);
  });

  it(
    'completes against `tpx mock-model` run as its own process, as a user starts it',
    { timeout: 60_000 },
    async () => {
      const mockProcess = spawn(process.execPath, [CLI, 'mock-model', '--port', '0'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        const url = await new Promise<string>((resolve, reject) => {
          let printed = '';
          mockProcess.stdout.on('data', (chunk: Buffer) => {
            printed += chunk.toString('utf8');
            const match = /listening on (http:\/\/\S+)/.exec(printed);
            if (match !== null) resolve(match[1]!);
          });
          mockProcess.once('close', (code) =>
            reject(new Error(`tpx mock-model exited with ${String(code)}`)),
          );
        });
        const result = await runTpx(
          ['claude', '--base-url', url, '--token', 'local', '--claude-bin', STAND_IN, '-p', 'say hi'],
          {},
        );
        expect(result.stderr).toContain('stand-in: 2 turn(s), 1 tool round(s), stop_reason end_turn');
        expect(result.code).toBe(0);
        expect(result.stdout).toContain('The tools answered: Glob');
      } finally {
        mockProcess.kill('SIGTERM');
      }
    },
  );

  it('takes the upstream from flags equal to the variables', async () => {
    const result = await runTpx(
      [
        'claude',
        '--base-url',
        mock.url,
        '--token',
        'upstream-token-7f3a',
        '--model-map',
        '*=tpx-mock-1',
        '--claude-bin',
        STAND_IN,
        '--',
        '-p',
        'hi',
      ],
      {},
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`upstream: ${mock.url}`);
    expect(result.stderr).toContain('models: *=tpx-mock-1');
  });

  it('passes arguments, stdin and the exit code through', async () => {
    const echo = script('printf "%s|" "$@"; cat; exit 7');
    const result = await runTpx(
      ['claude', '--claude-bin', echo, '-p', 'two words', '--verbose'],
      upstream(),
      {
        input: 'from stdin',
      },
    );
    expect(result.code).toBe(7);
    expect(result.stdout).toBe('-p|two words|--verbose|from stdin');
  });

  it('gives Claude Code the proxy URL and a fresh token, never the upstream credentials', async () => {
    const show = script('echo "$ANTHROPIC_BASE_URL $ANTHROPIC_AUTH_TOKEN ${ANTHROPIC_API_KEY+key-present}"');
    // With a key set, the proxy uses it (the anthropic provider) and says the TPX_* settings are ignored;
    // Claude Code gets the proxy's token instead of the key.
    const first = await runTpx(['claude', '--claude-bin', show], {
      ...upstream(),
      ANTHROPIC_API_KEY: 'sk-ant-secret-5c2e',
      ANTHROPIC_BASE_URL: mock.url,
    });
    const second = await runTpx(['claude', '--claude-bin', show], upstream());
    const [url, token, key] = first.stdout.trim().split(' ');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(token!.length).toBeGreaterThanOrEqual(24);
    expect(key).toBeUndefined();
    expect(first.stderr).toContain('TPX_BASE_URL, TPX_OAUTH_TOKEN ignored: ANTHROPIC_API_KEY is set');
    expect(first.stderr + first.stdout).not.toContain('sk-ant-secret-5c2e');
    expect(second.stdout.split(' ')[1]).not.toBe(token);
  });

  it('passes SIGTERM on to Claude Code and exits with its code, stopping the proxy', async () => {
    let started: (() => void) | undefined;
    const ready = new Promise<void>((resolve) => (started = resolve));
    const result = runTpx(['claude', '--claude-bin', STAND_IN, '--', '--wait', 'x'], upstream(), {
      onStart: (child) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          if (chunk.toString('utf8').includes('waiting')) {
            started?.();
            child.kill('SIGTERM');
          }
        });
      },
    });
    await ready;
    const finished = await result;
    expect(finished.code).toBe(143);
  });

  it('says how to install Claude Code when it is not found, exit 127', async () => {
    const result = await runTpx(['claude', '--claude-bin', '/nonexistent/claude', '-p', 'hi'], upstream());
    expect(result.code).toBe(127);
    expect(result.stderr).toContain('/nonexistent/claude not found: install Claude Code');
  });

  it("warns before launching Claude Code when the upstream's context window cannot hold its first request", async () => {
    const small = await startScriptedServer((record) =>
      record.url === '/v1/models'
        ? step.json({ object: 'list', data: [{ id: 'qwen3-4b', owned_by: 'llamacpp' }] })
        : record.url === '/props'
          ? step.json({ default_generation_settings: { n_ctx: 4096 } })
          : step.json({ error: { message: 'not found' } }, { status: 404 }),
    );
    try {
      const started = script('echo "claude started" >&2');
      const result = await runTpx(['claude', '--claude-bin', started], {
        TPX_BASE_URL: `${small.url}/v1`,
        TPX_OAUTH_TOKEN: 'local',
        TPX_DIALECT: 'llamacpp',
      });
      expect(result.code).toBe(0);
      const warning = result.stderr.indexOf('warning: the context window of qwen3-4b is 4096 tokens');
      expect(warning).toBeGreaterThan(-1);
      expect(warning).toBeLessThan(result.stderr.indexOf('claude started'));
      expect(result.stderr).toContain('fix: restart llama-server with -c 32768 (--ctx-size 32768)');
    } finally {
      await small.close();
    }
  });

  it('prints one line per exchange on its stderr: the model asked for and the one that answered, tokens, time, status', async () => {
    const result = await runTpx(['claude', '--claude-bin', STAND_IN, '-p', 'look around'], upstream());
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /tpx: POST \/v1\/messages claude-sonnet-4-5 → tpx-mock-1 · \d+ in, \d+ out · \d+ ms · 200\n/,
    );
    // The haiku-tier background call, and the agent loop's turns: one line each.
    const lines = result.stderr.split('\n').filter((line) => line.startsWith('tpx: POST /v1/messages'));
    expect(lines).toHaveLength(3);
  });

  it('explains a failed exchange in full on its stderr', async () => {
    const small = await startScriptedServer((record) =>
      record.url === '/v1/models'
        ? step.json({ object: 'list', data: [{ id: 'qwen3-4b' }] })
        : step.json(
            {
              error: {
                code: 400,
                type: 'exceed_context_size_error',
                message: 'the request exceeds the available context size, try increasing it',
                n_prompt_tokens: 14235,
                n_ctx: 4096,
              },
            },
            { status: 400 },
          ),
    );
    try {
      const result = await runTpx(['claude', '--claude-bin', STAND_IN, '-p', 'hi'], {
        TPX_BASE_URL: `${small.url}/v1`,
        TPX_OAUTH_TOKEN: 'local',
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /tpx: POST \/v1\/messages claude-\S+ → qwen3-4b · \d+ ms · 400 MODEL_EHTTP\n {2}400 exceed_context_size_error: prompt is too long: 14235 tokens > 4096 maximum/,
      );
      expect(result.stderr).toContain('try increasing it');
    } finally {
      await small.close();
    }
  });

  it('keeps --log-bodies and --log-file - as its own options, not passed on to claude', async () => {
    const echo = script('printf "%s|" "$@"');
    const own = await runTpx(
      ['claude', '--log-bodies', '--log-file', '-', '--claude-bin', echo, '-p', 'hi'],
      upstream(),
    );
    expect(own.code).toBe(0);
    expect(own.stdout).toBe('-p|hi|');
    const logged = await runTpx(
      ['claude', '--log-file', '-', '--log-bodies', '--claude-bin', STAND_IN, '-p', 'hi'],
      upstream(),
    );
    expect(logged.code).toBe(0);
    const lines = logged.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const exchange = lines.find((line) => line['msg'] === 'exchange' && line['path'] === '/v1/messages');
    expect(String(exchange?.['requestBody'])).toContain('"messages"');
    const sent = exchange?.['upstreamRequestBodies'] as { body: string }[];
    expect(JSON.parse(sent[0]!.body)).toMatchObject({ model: 'tpx-mock-1' });
    expect(logged.stderr).not.toContain('upstream-token-7f3a');
    const refused = await runTpx(['claude', '--log-bodies', '--claude-bin', echo], upstream());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--log-bodies needs --log-file');
  });

  it('prints the metrics address with the token that opens it', async () => {
    const fetchMetrics = script(
      `node -e 'fetch(process.env.ANTHROPIC_BASE_URL + "/metrics", { headers: { authorization: "Bearer " + process.env.ANTHROPIC_AUTH_TOKEN } }).then(async (r) => console.log(r.status, (await r.text()).includes("tpx_requests_total"), process.env.ANTHROPIC_BASE_URL, process.env.ANTHROPIC_AUTH_TOKEN))'`,
    );
    const result = await runTpx(['claude', '--claude-bin', fetchMetrics], upstream());
    const [status, hasMetrics, url, token] = result.stdout.trim().split(' ');
    expect([status, hasMetrics]).toEqual(['200', 'true']);
    expect(result.stderr).toContain(`metrics: curl -H 'Authorization: Bearer ${token!}' ${url!}/metrics`);
  });

  it('says why an exchange was retried, and what to do about a one-slot server after a first-byte deadline', async () => {
    let chats = 0;
    const slow = await startScriptedServer((record) => {
      if (record.url === '/v1/models') return step.json({ object: 'list', data: [{ id: 'qwen3-4b' }] });
      if (record.url !== '/v1/chat/completions') return step.json({ error: 'not found' }, { status: 404 });
      chats++;
      if (chats === 1) return step.noHeaders();
      return step.json({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 0,
        model: 'qwen3-4b',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
      });
    });
    try {
      const once = script(
        `node -e 'fetch(process.env.ANTHROPIC_BASE_URL + "/v1/messages", { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer " + process.env.ANTHROPIC_AUTH_TOKEN }, body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: "hi" }] }) }).then((r) => console.log(r.status))'`,
      );
      const result = await runTpx(['claude', '--first-byte-timeout', '300ms', '--claude-bin', once], {
        TPX_BASE_URL: `${slow.url}/v1`,
        TPX_OAUTH_TOKEN: 'local',
      });
      expect(result.stdout.trim()).toBe('200');
      expect(result.stderr).toMatch(
        /tpx: POST \/v1\/messages claude-sonnet-4-5 → qwen3-4b · .* · 2 attempts · 200\n/,
      );
      expect(result.stderr).toContain(
        '  attempt 1 failed (MODEL_ETIMEOUT first-byte), retried: the tpx endpoint sent no response headers within 300 ms (first-byte deadline)',
      );
      expect(result.stderr).toContain('start the server with -np 2 or more');
      expect(result.stderr).toContain('--first-byte-timeout');
    } finally {
      await slow.close();
    }
  });
});
