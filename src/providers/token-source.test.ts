import { getEventListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { CommandResult } from './run-shell-command.js';
import { createTokenSource } from './token-source.js';

const directory = mkdtempSync(join(tmpdir(), 'tpx-token-source-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** A command runner answering each run with the next result. */
function scripted(...results: CommandResult[]) {
  const runs: { command: string; timeoutMs: number }[] = [];
  return {
    runs,
    run: (command: string, timeoutMs: number) => {
      runs.push({ command, timeoutMs });
      return Promise.resolve<CommandResult>(results.shift() ?? { ok: false, reason: 'ran out' });
    },
  };
}

describe('createTokenSource: static', () => {
  it('gives its value, never refreshes, and redacts it', async () => {
    const source = createTokenSource({ kind: 'static', origin: 'TPX_OAUTH_TOKEN', token: 'tok-static-1' });
    expect(source.kind).toBe('static');
    expect(source.origin).toBe('TPX_OAUTH_TOKEN');
    await expect(source.token({})).resolves.toBe('tok-static-1');
    await expect(source.refresh({}, 'tok-static-1')).resolves.toBeUndefined();
    expect(source.redact('sent tok-static-1 twice: tok-static-1')).toBe('sent [redacted] twice: [redacted]');
  });

  it('refreshes to nothing even when the refused token is not its own', async () => {
    const source = createTokenSource({ kind: 'static', origin: 'TPX_OAUTH_TOKEN', token: 'tok-static-1' });
    await expect(source.refresh({}, 'tok-other')).resolves.toBeUndefined();
  });

  it('does not redact a token shorter than six characters, which would match ordinary text', () => {
    expect(createTokenSource({ kind: 'static', origin: 'X', token: 'abcde' }).redact('abcde')).toBe('abcde');
    expect(createTokenSource({ kind: 'static', origin: 'X', token: 'abcdef' }).redact('abcdef')).toBe(
      '[redacted]',
    );
  });
});

describe('createTokenSource: an unknown kind', () => {
  it('is refused with MODEL_ECONFIG naming it', () => {
    const spec = { kind: 'keychain', origin: 'K' } as unknown as Parameters<typeof createTokenSource>[0];
    expect(thrown(() => createTokenSource(spec))).toMatchObject({
      code: 'MODEL_ECONFIG',
      message: 'unknown token source {"kind":"keychain","origin":"K"}',
    });
  });
});

describe('createTokenSource: file', () => {
  it('refuses a missing or empty file at start-up with MODEL_ECONFIG naming the origin', () => {
    const missing = thrown(() =>
      createTokenSource({ kind: 'file', origin: 'TPX_OAUTH_TOKEN_FILE', path: join(directory, 'absent') }),
    );
    expect(isTransportError(missing)).toBe(true);
    expect(missing).toMatchObject({
      code: 'MODEL_ECONFIG',
      message: 'TPX_OAUTH_TOKEN_FILE names a file that cannot be read (ENOENT)',
    });
    expect((missing as Error).cause).toMatchObject({ code: 'ENOENT' });
    const empty = join(directory, 'empty');
    writeFileSync(empty, '  \n');
    expect(thrown(() => createTokenSource({ kind: 'file', origin: 'F', path: empty }))).toMatchObject({
      code: 'MODEL_ECONFIG',
      message: 'F names an empty file',
    });
  });

  it('keeps the last good token while the file is empty or gone, and refreshes only to a different token', async () => {
    const path = join(directory, 'rotating');
    writeFileSync(path, ' tok-file-1 \n');
    const source = createTokenSource({ kind: 'file', origin: 'F', path });
    await expect(source.token({})).resolves.toBe('tok-file-1');
    writeFileSync(path, '');
    await expect(source.token({})).resolves.toBe('tok-file-1');
    rmSync(path);
    await expect(source.token({})).resolves.toBe('tok-file-1');
    expect(await source.refresh({}, 'tok-file-1')).toBeUndefined();
    writeFileSync(path, 'tok-file-2');
    const exchange = {};
    await expect(source.refresh(exchange, 'tok-file-1')).resolves.toBe('tok-file-2');
    await expect(source.refresh(exchange, 'tok-file-2')).resolves.toBeUndefined();
    expect(source.redact('tok-file-1 and tok-file-2')).toBe('[redacted] and [redacted]');
  });
});

describe('createTokenSource: file, per exchange', () => {
  it('picks up a rotated file on the next exchange, reading it at most once per exchange', async () => {
    const path = join(directory, 'per-exchange');
    writeFileSync(path, 'tok-file-a');
    const source = createTokenSource({ kind: 'file', origin: 'F', path });
    const first = {};
    await expect(source.token(first)).resolves.toBe('tok-file-a');
    writeFileSync(path, 'tok-file-bb');
    // The same exchange keeps the token it started with: its attempts must agree.
    await expect(source.token(first)).resolves.toBe('tok-file-a');
    await expect(source.token({})).resolves.toBe('tok-file-bb');
    writeFileSync(path, 'tok-file-ccc');
    await expect(source.token({})).resolves.toBe('tok-file-ccc');
    expect(source.redact('tok-file-bb')).toBe('[redacted]');
  });
});

describe('createTokenSource: command', () => {
  it('refuses a command that fails at start-up with MODEL_ECONFIG, redacting nothing it never produced', () => {
    const error = thrown(() =>
      createTokenSource(
        { kind: 'command', origin: 'TPX_OAUTH_TOKEN_COMMAND', command: 'get-token', timeoutMs: 5 },
        { runCommandSync: () => ({ ok: false, reason: 'exited with code 3' }) },
      ),
    );
    expect(error).toMatchObject({
      code: 'MODEL_ECONFIG',
      message: 'TPX_OAUTH_TOKEN_COMMAND did not produce a token at start-up: the command exited with code 3',
    });
  });

  it('runs once at start-up, then once per refused token, with its timeout', async () => {
    const runner = scripted({ ok: true, output: 'tok-cmd-2' });
    const starts: unknown[] = [];
    const source = createTokenSource(
      { kind: 'command', origin: 'C', command: 'get-token', timeoutMs: 1234 },
      {
        runCommandSync: (command, timeoutMs) => {
          starts.push({ command, timeoutMs });
          return { ok: true, output: 'tok-cmd-1' };
        },
        runCommand: runner.run,
      },
    );
    expect(starts).toStrictEqual([{ command: 'get-token', timeoutMs: 1234 }]);
    await expect(source.token({})).resolves.toBe('tok-cmd-1');
    const exchange = {};
    await expect(source.refresh(exchange, 'tok-cmd-1')).resolves.toBe('tok-cmd-2');
    await expect(source.refresh(exchange, 'tok-cmd-2')).resolves.toBeUndefined();
    expect(runner.runs).toStrictEqual([{ command: 'get-token', timeoutMs: 1234 }]);
    await expect(source.token({})).resolves.toBe('tok-cmd-2');
  });

  it('uses a token another exchange refreshed meanwhile without running the command again', async () => {
    const runner = scripted({ ok: true, output: 'tok-cmd-2' });
    const source = createTokenSource(
      { kind: 'command', origin: 'C', command: 'c', timeoutMs: 1 },
      { runCommandSync: () => ({ ok: true, output: 'tok-cmd-1' }), runCommand: runner.run },
    );
    await source.refresh({}, 'tok-cmd-1');
    await expect(source.refresh({}, 'tok-cmd-1')).resolves.toBe('tok-cmd-2');
    expect(runner.runs).toHaveLength(1);
  });

  it('shares one run between refreshes at the same time', async () => {
    const runner = scripted({ ok: true, output: 'tok-cmd-2' }, { ok: true, output: 'tok-cmd-3' });
    const source = createTokenSource(
      { kind: 'command', origin: 'C', command: 'c', timeoutMs: 1 },
      { runCommandSync: () => ({ ok: true, output: 'tok-cmd-1' }), runCommand: runner.run },
    );
    const both = await Promise.all([source.refresh({}, 'tok-cmd-1'), source.refresh({}, 'tok-cmd-1')]);
    expect(both).toStrictEqual(['tok-cmd-2', 'tok-cmd-2']);
    expect(runner.runs).toHaveLength(1);
    // Once it settled, a later refusal runs the command again.
    await expect(source.refresh({}, 'tok-cmd-2')).resolves.toBe('tok-cmd-3');
    expect(runner.runs).toHaveLength(2);
  });

  it('gives nothing new when the command prints the refused token again', async () => {
    const source = createTokenSource(
      { kind: 'command', origin: 'C', command: 'c', timeoutMs: 1 },
      {
        runCommandSync: () => ({ ok: true, output: 'tok-cmd-1' }),
        runCommand: scripted({ ok: true, output: 'tok-cmd-1' }).run,
      },
    );
    await expect(source.refresh({}, 'tok-cmd-1')).resolves.toBeUndefined();
  });

  it('fails a refresh whose command fails with MODEL_EAUTH, every token it produced redacted', async () => {
    const source = createTokenSource(
      { kind: 'command', origin: 'TPX_OAUTH_TOKEN_COMMAND', command: 'c', timeoutMs: 1 },
      {
        runCommandSync: () => ({ ok: true, output: 'tok-cmd-1' }),
        runCommand: scripted({ ok: false, reason: 'exited with code 1: "bad tok-cmd-1"' }).run,
      },
    );
    const error = await source.refresh({}, 'tok-cmd-1').catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'MODEL_EAUTH',
      status: 401,
      provider: 'tpx',
      message:
        'the upstream refused the token (401), and TPX_OAUTH_TOKEN_COMMAND could not refresh it: the command exited with code 1: "bad [redacted]"',
    });
  });

  it('stops waiting for the command when the exchange is cancelled', async () => {
    let finish: (result: CommandResult) => void = () => {};
    const source = createTokenSource(
      { kind: 'command', origin: 'C', command: 'c', timeoutMs: 1 },
      {
        runCommandSync: () => ({ ok: true, output: 'tok-cmd-1' }),
        runCommand: () => new Promise((resolve) => (finish = resolve)),
      },
    );
    const reason = new Error('caller left');
    const aborted = new AbortController();
    aborted.abort(reason);
    await expect(source.refresh({}, 'tok-cmd-1', aborted.signal)).rejects.toBe(reason);
    const controller = new AbortController();
    const pending = source.refresh({}, 'tok-cmd-1', controller.signal);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    finish({ ok: true, output: 'tok-cmd-2' });
  });

  it('leaves no abort listener on the exchange’s signal once a refresh is over', async () => {
    const source = createTokenSource(
      { kind: 'command', origin: 'C', command: 'c', timeoutMs: 1 },
      {
        runCommandSync: () => ({ ok: true, output: 'tok-cmd-1' }),
        runCommand: scripted({ ok: true, output: 'tok-cmd-2' }).run,
      },
    );
    const controller = new AbortController();
    await expect(source.refresh({}, 'tok-cmd-1', controller.signal)).resolves.toBe('tok-cmd-2');
    expect(getEventListeners(controller.signal, 'abort')).toStrictEqual([]);
  });

  it('remembers the last eight tokens for redaction', async () => {
    const outputs = Array.from({ length: 9 }, (_, index) => `tok-cmd-${index + 2}`);
    const source = createTokenSource(
      { kind: 'command', origin: 'C', command: 'c', timeoutMs: 1 },
      {
        runCommandSync: () => ({ ok: true, output: 'tok-cmd-1' }),
        runCommand: scripted(...outputs.map((output) => ({ ok: true as const, output }))).run,
      },
    );
    let rejected = 'tok-cmd-1';
    for (let index = 0; index < outputs.length; index++) rejected = (await source.refresh({}, rejected))!;
    expect(rejected).toBe('tok-cmd-10');
    expect(source.redact('tok-cmd-1 tok-cmd-2 tok-cmd-3 tok-cmd-10')).toBe(
      'tok-cmd-1 tok-cmd-2 [redacted] [redacted]',
    );
  });
});
