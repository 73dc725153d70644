import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModel, type MockModelServer } from '../../src/mock-model/mock-model.js';

const run = promisify(execFile);
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const BASE_ENV = { PATH: process.env['PATH'] ?? '', HOME: tmpdir() };

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function tpx(args: string[], env: Record<string, string> = {}, input?: string): Promise<Result> {
  const child = run(process.execPath, [CLI, ...args], { env: { ...BASE_ENV, ...env }, timeout: 20_000 });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  } else {
    child.child.stdin?.end();
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? -1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}

describe('the tpx binary', () => {
  let mock: MockModelServer;
  const token = 'cli-test-token-4b1d';

  beforeAll(async () => {
    mock = await startMockModel({ token });
  });
  afterAll(async () => {
    await mock.close();
  });

  it('prints help listing every command and exits 0', async () => {
    const result = await tpx(['--help']);
    expect(result.code).toBe(0);
    for (const command of ['serve', 'send', 'doctor', 'mock-model', 'demo'])
      expect(result.stdout).toContain(command);
  });

  it('prints help for each command', async () => {
    const commands = ['serve', 'send', 'doctor', 'claude', 'mock-model', 'demo'];
    const results = await Promise.all(commands.map((command) => tpx([command, '--help'])));
    commands.forEach((command, index) => {
      expect(results[index]!.code).toBe(0);
      expect(results[index]!.stdout).toContain(`tpx ${command}`);
    });
  });

  it('prints the package version', async () => {
    const result = await tpx(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('exits 2 with a hint for an unknown command or option', async () => {
    const unknown = await tpx(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const badOption = await tpx(['send', '--nope']);
    expect(badOption.code).toBe(2);
    expect(badOption.stderr).toContain('tpx send --help');
  });

  it('runs the demo: a complete tool-use round trip with no credentials', async () => {
    const result = await tpx(['demo']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('provider     : tpx');
    expect(result.stdout).toMatch(/tool call \S+: add\(/);
    expect(result.stdout).toMatch(/tool call \S+: now\(/);
    expect(result.stdout).toContain('done:');
  });

  it('sends one request from stdin through the tpx provider and prints the Message', async () => {
    const request = { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'ping' }] };
    const result = await tpx(
      ['send', '-'],
      { TPX_OAUTH_TOKEN: token, TPX_BASE_URL: mock.url },
      JSON.stringify(request),
    );
    expect(result.code).toBe(0);
    const message = JSON.parse(result.stdout) as {
      type: string;
      role: string;
      content: { type: string; text: string }[];
    };
    expect(message.type).toBe('message');
    expect(message.content[0]?.text).toContain('ping');
  });

  it('streams text with --stream from a request file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tpx-cli-'));
    const file = join(dir, 'request.json');
    writeFileSync(
      file,
      JSON.stringify({ model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }] }),
    );
    const result = await tpx(['send', file, '--stream'], { TPX_OAUTH_TOKEN: token, TPX_BASE_URL: mock.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('hello there');
    expect(result.stderr).toContain('stop_reason: end_turn');
  });

  it('exits 1 when the exchange fails, naming the error code', async () => {
    const request = { model: 'm', max_tokens: 50, messages: [{ role: 'user', content: 'ping' }] };
    const result = await tpx(['send', '-'], {}, JSON.stringify(request));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('MODEL_EAUTH');
  });

  it('exits 2 for a request that is not JSON', async () => {
    const result = await tpx(['send', '-'], { TPX_OAUTH_TOKEN: token, TPX_BASE_URL: mock.url }, '{not json');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not valid JSON');
  });

  it('exits 2 for a token without a base URL, naming the missing variable', async () => {
    const result = await tpx(['send', '-'], { TPX_OAUTH_TOKEN: token }, '{}');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('TPX_BASE_URL');
  });

  it('serve prints its address, provider and Claude Code lines, then exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], {
      env: { ...BASE_ENV, TPX_OAUTH_TOKEN: token, TPX_BASE_URL: mock.url },
    });
    let stderr = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no address printed: ${stderr}`)), 10_000);
      child.stderr.on('data', (data: Buffer) => {
        stderr += data.toString();
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
        if (match !== null && stderr.includes('ANTHROPIC_BASE_URL=')) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    expect(stderr).toContain('provider: tpx (TPX_OAUTH_TOKEN is set');
    expect(stderr).toContain(`ANTHROPIC_BASE_URL=${url}`);
    expect(stderr).not.toContain(token);
    const health = (await (await fetch(`${url}/healthz`)).json()) as { provider: string };
    expect(health.provider).toBe('tpx');
    const exitCode = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exitCode).toBe(0);
  });

  it('doctor explains the selection and a fix when there are no credentials', async () => {
    const result = await tpx(['doctor']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('provider: none');
    expect(result.stdout).toContain('fix: set TPX_BASE_URL and TPX_OAUTH_TOKEN');
    expect(result.stdout).toContain('or ANTHROPIC_API_KEY');
  });

  it('doctor passes every check against a working endpoint without printing the token', async () => {
    const result = await tpx(['doctor'], { TPX_OAUTH_TOKEN: token, TPX_BASE_URL: mock.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('provider: tpx');
    expect(result.stdout).toContain('TPX_OAUTH_TOKEN is set');
    expect(result.stdout).toContain('all checks passed');
    expect(result.stdout + result.stderr).not.toContain(token);
  });

  it('doctor uses the --token flag over an ANTHROPIC_API_KEY left in the environment', async () => {
    const result = await tpx(['doctor', '--token', token, '--base-url', mock.url], {
      ANTHROPIC_API_KEY: 'sk-ant-left-in-the-shell',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('provider: tpx');
    expect(result.stdout + result.stderr).not.toContain('sk-ant-left-in-the-shell');
  });

  it('doctor names the flags given and the variable each set before the reasons that name variables', async () => {
    const result = await tpx(['doctor', '--token', token, '--base-url', mock.url, '--dialect', 'vllm'], {});
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[1]).toBe(
      '  flags: --base-url as TPX_BASE_URL, --token as TPX_OAUTH_TOKEN, --dialect as TPX_DIALECT (each flag sets its variable, overriding the environment)',
    );
    expect(lines[2]).toMatch(/^ {2}provider: tpx \(TPX_OAUTH_TOKEN is set/);
    expect(result.stdout).not.toContain(token);
  });

  it('doctor without flags lists none', async () => {
    const result = await tpx(['doctor'], { TPX_OAUTH_TOKEN: token, TPX_BASE_URL: mock.url });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain('flags:');
    expect(result.stdout.split('\n')[1]).toMatch(/^ {2}provider: tpx/);
  });

  it('doctor sends one tiny request and reports the answer', async () => {
    const before = mock.requests.length;
    const result = await tpx(['doctor', '--probe'], { TPX_OAUTH_TOKEN: token, TPX_BASE_URL: mock.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('answered: stop_reason end_turn');
    const chat = mock.requests.slice(before).filter((request) => request.path.endsWith('/chat/completions'));
    expect(chat).toHaveLength(1);
    expect((chat[0]?.body as { max_tokens?: number }).max_tokens).toBe(16);
  });

  it('doctor reports an unreachable endpoint with a fix', async () => {
    const result = await tpx(['doctor'], { TPX_OAUTH_TOKEN: token, TPX_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('nothing is listening at 127.0.0.1:1 (connection refused');
    expect(result.stdout).toContain('fix: start the model server');
  });

  it('doctor reports refused credentials with a fix', async () => {
    const result = await tpx(['doctor'], { TPX_OAUTH_TOKEN: 'wrong-token', TPX_BASE_URL: mock.url });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('refused the bearer token from TPX_OAUTH_TOKEN');
    expect(result.stdout).toContain('refused the credentials');
  });
});
