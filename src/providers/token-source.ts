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
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { TransportError } from '../errors.js';
import { runShellCommand, runShellCommandSync, type CommandResult } from './run-shell-command.js';

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

/** Injection points for tests. */
export interface TokenSourceOptions {
  /** Runs the command at start-up, synchronously. @default a shell via `spawnSync` */
  runCommandSync?: (command: string, timeoutMs: number) => CommandResult;
  /** Runs the command after a 401. @default a shell via `exec` */
  runCommand?: (command: string, timeoutMs: number) => Promise<CommandResult>;
}

/** Default bound on one run of the token command. */
export const DEFAULT_TOKEN_COMMAND_TIMEOUT_MS = 10_000;

/** How many distinct token values are remembered for redaction. */
const REMEMBERED_TOKENS = 8;
/** Shorter strings are not redacted: they would match ordinary text. */
const MIN_REDACTED_LENGTH = 6;

/** What one exchange has done with the source: the token file is checked, and refreshed, once each. */
interface ExchangeState {
  checkedFile: boolean;
  refreshed: boolean;
}

/** The token values a source produced (the last few), to keep them out of every message. */
class SeenTokens {
  readonly #tokens: string[] = [];

  remember(token: string): void {
    if (token.length < MIN_REDACTED_LENGTH || this.#tokens.includes(token)) return;
    this.#tokens.push(token);
    if (this.#tokens.length > REMEMBERED_TOKENS) this.#tokens.shift();
  }

  redact(text: string): string {
    let result = text;
    for (const token of this.#tokens) result = result.split(token).join('[redacted]');
    return result;
  }
}

/**
 * Creates the token source for a spec. A file is read once, now; a command runs once, now.
 *
 * @throws TransportError `MODEL_ECONFIG` when the file cannot be read or is empty, or when the command
 * fails, times out, or prints nothing.
 */
export function createTokenSource(spec: TokenSpec, options: TokenSourceOptions = {}): TokenSource {
  return new RefreshableTokenSource(
    spec,
    options.runCommandSync ?? runShellCommandSync,
    options.runCommand ?? runShellCommand,
  );
}

/** The token at start-up: the static value, the file's content, or the command's output. */
function initialToken(
  spec: TokenSpec,
  runSync: (command: string, timeoutMs: number) => CommandResult,
  redact: (text: string) => string,
): string {
  switch (spec.kind) {
    case 'static':
      return spec.token;
    case 'file':
      return readTokenFileSync(spec.path, spec.origin);
    case 'command': {
      const result = runSync(spec.command, spec.timeoutMs);
      if (!result.ok) {
        throw new TransportError(
          'MODEL_ECONFIG',
          redact(`${spec.origin} did not produce a token at start-up: the command ${result.reason}`),
        );
      }
      return result.output;
    }
    default: {
      const unknown: never = spec;
      throw new TransportError('MODEL_ECONFIG', `unknown token source ${JSON.stringify(unknown)}`);
    }
  }
}

/** A token source of any kind, refreshed from where it came from (see the table above). */
class RefreshableTokenSource implements TokenSource {
  readonly kind: TokenSourceKind;
  readonly origin: string;
  readonly #spec: TokenSpec;
  readonly #run: (command: string, timeoutMs: number) => Promise<CommandResult>;
  readonly #seen = new SeenTokens();
  readonly #exchanges = new WeakMap<object, ExchangeState>();
  #current: string;
  /** The file's identity (`mtime:size:inode:ctime`) when `#current` was read; `undefined` forces a read. */
  #fileStamp: string | undefined;
  /** The refresh command running now, which every exchange refreshing meanwhile waits for. */
  #inflight: Promise<string> | undefined;

  constructor(
    spec: TokenSpec,
    runSync: (command: string, timeoutMs: number) => CommandResult,
    run: (command: string, timeoutMs: number) => Promise<CommandResult>,
  ) {
    this.kind = spec.kind;
    this.origin = spec.origin;
    this.#spec = spec;
    this.#run = run;
    this.#current = initialToken(spec, runSync, (text) => this.redact(text));
    this.#seen.remember(this.#current);
  }

  async token(exchange: object): Promise<string> {
    const spec = this.#spec;
    if (spec.kind === 'file') {
      const state = this.#stateFor(exchange);
      if (!state.checkedFile) {
        state.checkedFile = true;
        await this.#checkFile(spec.path, false);
      }
    }
    return this.#current;
  }

  async refresh(exchange: object, rejected: string, signal?: AbortSignal): Promise<string | undefined> {
    const state = this.#stateFor(exchange);
    if (state.refreshed) return undefined;
    state.refreshed = true;
    const spec = this.#spec;
    switch (spec.kind) {
      case 'static':
        return undefined;
      case 'file':
        await this.#checkFile(spec.path, true);
        return this.#current !== rejected ? this.#current : undefined;
      case 'command': {
        // Another exchange may have refreshed since this one read the token: use its result.
        if (this.#current !== rejected) return this.#current;
        const refreshed = await abortable(this.#runRefreshCommand(spec), signal);
        return refreshed !== rejected ? refreshed : undefined;
      }
      default: {
        const unknown: never = spec;
        return unknown;
      }
    }
  }

  redact(text: string): string {
    return this.#seen.redact(text);
  }

  #stateFor(exchange: object): ExchangeState {
    let state = this.#exchanges.get(exchange);
    if (state === undefined) {
      state = { checkedFile: false, refreshed: false };
      this.#exchanges.set(exchange, state);
    }
    return state;
  }

  #use(token: string): void {
    this.#current = token;
    this.#seen.remember(token);
  }

  /** Re-reads the file when its identity changed (or always, when `force`); keeps the last good token. */
  async #checkFile(path: string, force: boolean): Promise<void> {
    try {
      const info = await stat(path);
      const stamp = `${info.mtimeMs}:${info.size}:${info.ino}:${info.ctimeMs}`;
      if (!force && stamp === this.#fileStamp) return;
      const content = (await readFile(path, 'utf8')).trim();
      // A file caught mid-rotation (empty, or gone for a moment) keeps the token read last.
      if (content === '') return;
      this.#use(content);
      this.#fileStamp = stamp;
    } catch {
      // Unreadable right now: keep the last good token; a 401 will say whether it still works.
    }
  }

  /** Runs the refresh command, once at a time: a refresh asked for while one runs waits for it. */
  #runRefreshCommand(spec: { command: string; timeoutMs: number; origin: string }): Promise<string> {
    this.#inflight ??= this.#run(spec.command, spec.timeoutMs)
      .then((result) => {
        if (!result.ok) {
          throw new TransportError(
            'MODEL_EAUTH',
            this.redact(
              `the upstream refused the token (401), and ${spec.origin} could not refresh it: the command ${result.reason}`,
            ),
            { provider: 'tpx' },
          );
        }
        this.#use(result.output);
        return this.#current;
      })
      .finally(() => {
        this.#inflight = undefined;
      });
    return this.#inflight;
  }
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
