/**
 * Where the `tpx` provider's OAuth bearer token comes from, and how it is refreshed. The provider never
 * changes once chosen (`SelectionStable`); the token value may, from the same source:
 *
 * | source                      | start-up                         | each exchange                          | after a 401 (once per exchange)        |
 * |-----------------------------|----------------------------------|----------------------------------------|----------------------------------------|
 * | `TPX_OAUTH_TOKEN` (static)  | the value                        | the value                              | nothing to refresh: `MODEL_EAUTH`      |
 * | `TPX_OAUTH_TOKEN_FILE`      | read (by `createTokenSource`)    | re-read when the file's mtime, size or inode changed (checked at most once) | re-read; retry if the token changed |
 * | `TPX_OAUTH_TOKEN_COMMAND`   | run with a shell; failure → `MODEL_ECONFIG` | the last output                  | run again; retry with its output; failure → `MODEL_EAUTH` |
 *
 * A rotating file is how Kubernetes projected service-account tokens (and similar agents) deliver
 * short-lived tokens; a command is how `gcloud auth print-access-token` or `az account get-access-token`
 * do. Command output is trimmed and never logged; errors quote at most the first line of its stderr,
 * with any token value this source produced replaced by `[redacted]`.
 *
 * An exchange is identified by an object the caller passes (the transport uses the exchange's
 * `AbortSignal`, which every attempt of one exchange shares): that is how "at most once per exchange"
 * holds across retries.
 *
 * @module
 */
import { exec, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { TransportError } from '../errors.js';

/** Which kind of source a token comes from. */
export type TokenSourceKind = 'static' | 'file' | 'command';

/** What `selectProvider` found: the source and, for a static token, its value. */
export type TokenSpec =
  | { kind: 'static'; origin: string; token: string }
  | { kind: 'file'; origin: string; path: string }
  | { kind: 'command'; origin: string; command: string; timeoutMs: number };

/** The current token of one source. */
export interface TokenSource {
  readonly kind: TokenSourceKind;
  /** The option or variable the source came from (`TPX_OAUTH_TOKEN_FILE`), for messages. Never the value. */
  readonly origin: string;
  /** The token to send in an attempt of `exchange`. A file is checked at most once per exchange. */
  token(exchange: object): Promise<string>;
  /**
   * After the upstream answered 401 to `rejected`: refreshes the token, at most once per exchange.
   * Resolves to a token worth retrying with, or `undefined` when there is none (a static token, an
   * unchanged file, a second 401 in the same exchange).
   *
   * @param signal cancels the wait (the command itself is bounded by its timeout)
   * @throws TransportError `MODEL_EAUTH` when the refresh command fails.
   */
  refresh(exchange: object, rejected: string, signal?: AbortSignal): Promise<string | undefined>;
  /** `text` with every token value this source produced replaced by `[redacted]`. */
  redact(text: string): string;
}

/** How a command ended: its trimmed output, or why there is none. */
export type CommandResult = { ok: true; output: string } | { ok: false; reason: string };

/** Injection points for tests. */
export interface TokenSourceOptions {
  /** Runs the command at start-up, synchronously. @default a shell via `spawnSync` */
  runCommandSync?: (command: string, timeoutMs: number) => CommandResult;
  /** Runs the command after a 401. @default a shell via `exec` */
  runCommand?: (command: string, timeoutMs: number) => Promise<CommandResult>;
}

/** Default bound on one run of the token command. */
export const DEFAULT_TOKEN_COMMAND_TIMEOUT_MS = 10_000;

/** Largest command output accepted (a token is a few KiB at most). */
const MAX_COMMAND_OUTPUT_BYTES = 1024 * 1024;
/** How many distinct token values are remembered for redaction. */
const REMEMBERED_TOKENS = 8;
/** Shorter strings are not redacted: they would match ordinary text. */
const MIN_REDACTED_LENGTH = 6;

interface ExchangeState {
  checkedFile: boolean;
  refreshed: boolean;
}

/**
 * Creates the token source for a spec. A file is read once, now; a command runs once, now.
 *
 * @throws TransportError `MODEL_ECONFIG` when the file cannot be read or is empty, or when the command
 * fails, times out, or prints nothing.
 */
export function createTokenSource(spec: TokenSpec, options: TokenSourceOptions = {}): TokenSource {
  const runSync = options.runCommandSync ?? runShellCommandSync;
  const run = options.runCommand ?? runShellCommand;
  const exchanges = new WeakMap<object, ExchangeState>();
  const seen: string[] = [];
  let current: string;
  /** The file's identity (`mtime:size:inode:ctime`) when `current` was read; `undefined` forces a read. */
  let fileStamp: string | undefined;
  let inflight: Promise<string> | undefined;

  const remember = (token: string): void => {
    if (token.length < MIN_REDACTED_LENGTH || seen.includes(token)) return;
    seen.push(token);
    if (seen.length > REMEMBERED_TOKENS) seen.shift();
  };
  const redact = (text: string): string => {
    let result = text;
    for (const token of seen) result = result.split(token).join('[redacted]');
    return result;
  };
  const stateFor = (exchange: object): ExchangeState => {
    let state = exchanges.get(exchange);
    if (state === undefined) {
      state = { checkedFile: false, refreshed: false };
      exchanges.set(exchange, state);
    }
    return state;
  };

  switch (spec.kind) {
    case 'static':
      current = spec.token;
      break;
    case 'file':
      current = readTokenFileSync(spec.path, spec.origin);
      break;
    case 'command': {
      const result = runSync(spec.command, spec.timeoutMs);
      if (!result.ok) {
        throw new TransportError(
          'MODEL_ECONFIG',
          redact(`${spec.origin} did not produce a token at start-up: the command ${result.reason}`),
        );
      }
      current = result.output;
      break;
    }
    default: {
      const unknown: never = spec;
      throw new TransportError('MODEL_ECONFIG', `unknown token source ${JSON.stringify(unknown)}`);
    }
  }
  remember(current);

  /** Re-reads the file when its identity changed (or always, when `force`); keeps the last good token. */
  async function checkFile(path: string, force: boolean): Promise<void> {
    try {
      const info = await stat(path);
      const stamp = `${info.mtimeMs}:${info.size}:${info.ino}:${info.ctimeMs}`;
      if (!force && stamp === fileStamp) return;
      const content = (await readFile(path, 'utf8')).trim();
      // A file caught mid-rotation (empty, or gone for a moment) keeps the token read last.
      if (content === '') return;
      current = content;
      fileStamp = stamp;
      remember(current);
    } catch {
      // Unreadable right now: keep the last good token; a 401 will say whether it still works.
    }
  }

  function runRefreshCommand(command: string, timeoutMs: number, origin: string): Promise<string> {
    inflight ??= run(command, timeoutMs)
      .then((result) => {
        if (!result.ok) {
          throw new TransportError(
            'MODEL_EAUTH',
            redact(
              `the upstream refused the token (401), and ${origin} could not refresh it: the command ${result.reason}`,
            ),
            { provider: 'tpx' },
          );
        }
        current = result.output;
        remember(current);
        return current;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  }

  return {
    kind: spec.kind,
    origin: spec.origin,

    async token(exchange) {
      if (spec.kind === 'file') {
        const state = stateFor(exchange);
        if (!state.checkedFile) {
          state.checkedFile = true;
          await checkFile(spec.path, false);
        }
      }
      return current;
    },

    async refresh(exchange, rejected, signal) {
      const state = stateFor(exchange);
      if (state.refreshed) return undefined;
      state.refreshed = true;
      switch (spec.kind) {
        case 'static':
          return undefined;
        case 'file':
          await checkFile(spec.path, true);
          return current !== rejected ? current : undefined;
        case 'command': {
          // Another exchange may have refreshed since this one read the token: use its result.
          if (current !== rejected) return current;
          const refreshed = await abortable(
            runRefreshCommand(spec.command, spec.timeoutMs, spec.origin),
            signal,
          );
          return refreshed !== rejected ? refreshed : undefined;
        }
        default: {
          const unknown: never = spec;
          return unknown;
        }
      }
    },

    redact,
  };
}

/** The token in a file at start-up: its trimmed content, which must not be empty. */
function readTokenFileSync(path: string, origin: string): string {
  let content: string;
  try {
    content = readFileSync(path, 'utf8').trim();
  } catch (error) {
    const code = (error as { code?: string }).code ?? 'unreadable';
    throw new TransportError('MODEL_ECONFIG', `${origin} names a file that cannot be read (${code})`, {
      cause: error,
    });
  }
  if (content === '') throw new TransportError('MODEL_ECONFIG', `${origin} names an empty file`);
  return content;
}

/** Waits for `promise`, or rejects with the signal's reason as soon as it aborts. */
async function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  signal.throwIfAborted();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort);
  }
}

/** The first line of a command's stderr, shortened, for an error message. */
function stderrHint(stderr: string): string {
  const line = stderr.trim().split(/\r?\n/, 1)[0] ?? '';
  if (line === '') return '';
  return `: ${JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}…` : line)}`;
}

function outcome(
  output: string,
  stderr: string,
  exit: { code: number | null; signal: string | null; timedOut: boolean; failure: string | undefined },
  timeoutMs: number,
): CommandResult {
  if (exit.timedOut) return { ok: false, reason: `did not finish within ${timeoutMs} ms` };
  if (exit.failure !== undefined) return { ok: false, reason: `could not be run (${exit.failure})` };
  if (exit.signal !== null) return { ok: false, reason: `was killed by ${exit.signal}${stderrHint(stderr)}` };
  if (exit.code !== 0)
    return { ok: false, reason: `exited with code ${String(exit.code)}${stderrHint(stderr)}` };
  const token = output.trim();
  if (token === '') return { ok: false, reason: `printed nothing on stdout${stderrHint(stderr)}` };
  return { ok: true, output: token };
}

/** Runs `command` with the platform shell, synchronously (start-up only). */
export function runShellCommandSync(command: string, timeoutMs: number): CommandResult {
  const result = spawnSync(command, {
    shell: true,
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: MAX_COMMAND_OUTPUT_BYTES,
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const errorCode = (result.error as { code?: string } | undefined)?.code;
  return outcome(
    result.stdout ?? '',
    result.stderr ?? '',
    {
      code: result.status,
      signal: result.signal,
      timedOut: errorCode === 'ETIMEDOUT',
      failure: result.error === undefined ? undefined : (errorCode ?? result.error.message),
    },
    timeoutMs,
  );
}

/** Runs `command` with the platform shell. */
export function runShellCommand(command: string, timeoutMs: number): Promise<CommandResult> {
  return new Promise((resolve) => {
    exec(
      command,
      { encoding: 'utf8', timeout: timeoutMs, maxBuffer: MAX_COMMAND_OUTPUT_BYTES, windowsHide: true },
      (error, stdout, stderr) => {
        const failure = error as
          (Error & { code?: unknown; killed?: boolean; signal?: string | null }) | null;
        const spawnFailure = typeof failure?.code === 'string' ? failure.code : undefined;
        // exec kills the child when the timeout passes; `killed` alone also covers an oversized output,
        // which comes with a string code instead.
        const timedOut = failure?.killed === true && spawnFailure === undefined && timeoutMs > 0;
        const exitCode = typeof failure?.code === 'number' ? failure.code : failure === null ? 0 : null;
        resolve(
          outcome(
            stdout,
            stderr,
            {
              code: exitCode,
              signal: failure?.signal ?? null,
              timedOut,
              failure: spawnFailure,
            },
            timeoutMs,
          ),
        );
      },
    );
  });
}
