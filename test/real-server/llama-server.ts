/**
 * Starts a real llama.cpp `llama-server` for tests: one process per model, on a free loopback port,
 * ready when `GET /health` says so, stopped again by `stop()`.
 *
 * ```ts
 * import { startLlamaServer } from '../real-server/llama-server.js';
 *
 * let server: LlamaServer;
 * beforeAll(async () => {
 *   server = await startLlamaServer({ model: 'tiny-tools' }); // or 'tiny-tools-strict', or a path
 * });
 * afterAll(() => server.stop());
 *
 * // tpx provider:       tpxBaseUrl: server.chatBaseUrl  (`http://127.0.0.1:PORT/v1`), tpxDialect: 'llamacpp'
 * // anthropic provider: anthropicBaseUrl: server.url    (`http://127.0.0.1:PORT`)
 * ```
 *
 * The binary is `TPX_LLAMA_SERVER` when set (any llama-server build works), else the offline build in
 * `../shared/realserver/llama-server` beside the repository. Models are looked up by name in the
 * `models/` folder next to that build (`TPX_LLAMA_MODELS` overrides the folder). Files that use the
 * server are only collected when a binary is found (see `vitest.config.ts`); {@link llamaServerHint}
 * is the one line printed otherwise.
 *
 * Every process runs with `-np 1 -t 1` (one slot, one thread: on a small machine more are slower), a
 * fixed `--seed` so a run is repeatable, `--jinja` (the model's own chat template, as users run it)
 * and `--no-webui`. llama-server needs an explicit `--port`, so a free one is found by binding port 0
 * and releasing it; if another process takes it first, the start is retried on a new port.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's `../shared/realserver/`, where the offline build and its models live. */
const defaultRealServerDirectory = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../shared/realserver',
);

/** The llama-server binary to use, or `undefined` when none is found. */
export function findLlamaServer(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env['TPX_LLAMA_SERVER'];
  if (configured !== undefined && configured !== '') return existsSync(configured) ? configured : undefined;
  const bundled = join(defaultRealServerDirectory, 'llama-server');
  return existsSync(bundled) ? bundled : undefined;
}

/** The one line printed when no binary is found: how to provide one. */
export const llamaServerHint =
  'real-server tests not run: no llama-server found; set TPX_LLAMA_SERVER=/path/to/llama-server ' +
  '(any llama.cpp build) or put the offline build in ../shared/realserver/';

/** Where the named models (`tiny-tools.gguf`, …) are. */
export function modelsDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env['TPX_LLAMA_MODELS'];
  return configured !== undefined && configured !== ''
    ? configured
    : join(defaultRealServerDirectory, 'models');
}

/** What to start. */
export interface LlamaServerOptions {
  /**
   * A model name in {@link modelsDirectory} without `.gguf` (`'tiny-tools'`, whose template accepts
   * system messages anywhere; `'tiny-tools-strict'`, whose template refuses one that is not first), or
   * a path to a GGUF file.
   */
  model: string;
  /** `-c`: the context size in tokens. @default 4096 */
  contextSize?: number;
  /** `--seed`: makes sampling repeatable. @default 42 */
  seed?: number;
  /** More command-line arguments, appended as given. @default [] */
  extraArguments?: readonly string[];
  /** How long to wait for `GET /health` to answer ok. @default 20_000 */
  readyTimeoutMs?: number;
}

/** A running server. */
export interface LlamaServer {
  /** `http://127.0.0.1:PORT`: the base URL for the `anthropic` provider (`/v1/messages`). */
  readonly url: string;
  /** `http://127.0.0.1:PORT/v1`: the base URL for the `tpx` provider (`/chat/completions`). */
  readonly chatBaseUrl: string;
  readonly port: number;
  /** The GGUF file it serves. */
  readonly modelPath: string;
  /** Everything the process wrote to stdout and stderr so far (for failure messages). */
  output(): string;
  /** Stops the process (SIGTERM, then SIGKILL after 3 s); resolves once it has exited. Idempotent. */
  stop(): Promise<void>;
}

/** Starts a llama-server, retrying on a new port if the chosen one was taken meanwhile. */
export async function startLlamaServer(options: LlamaServerOptions): Promise<LlamaServer> {
  const binary = findLlamaServer();
  if (binary === undefined) throw new Error(llamaServerHint);
  const modelPath = isAbsolute(options.model)
    ? options.model
    : join(modelsDirectory(), `${options.model}.gguf`);
  if (!existsSync(modelPath)) throw new Error(`llama-server model not found: ${modelPath}`);
  const maxAttempts = 3;
  let lastError: unknown;
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    const port = await findFreePort();
    try {
      return await startOnPort(binary, modelPath, port, options);
    } catch (error) {
      lastError = error;
      if (!(error instanceof PortTakenError)) throw error;
    }
  }
  throw lastError instanceof Error ? lastError : new Error(String(lastError));
}

/** The start failed because the port was taken between finding it free and the server binding it. */
class PortTakenError extends Error {}

async function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolvePort(port));
    });
  });
}

/** Live processes, killed if the test process exits without stopping them (a crashed test file). */
const liveProcesses = new Set<ChildProcess>();
let exitHookInstalled = false;
function killLeftoversOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of liveProcesses) child.kill('SIGKILL');
  });
}

async function startOnPort(
  binary: string,
  modelPath: string,
  port: number,
  options: LlamaServerOptions,
): Promise<LlamaServer> {
  const commandArguments = [
    '-m',
    modelPath,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '-c',
    String(options.contextSize ?? 4096),
    '-np',
    '1',
    '-t',
    '1',
    '--seed',
    String(options.seed ?? 42),
    '--jinja',
    '--no-webui',
    ...(options.extraArguments ?? []),
  ];
  const child = spawn(binary, commandArguments, { stdio: ['ignore', 'pipe', 'pipe'] });
  killLeftoversOnExit();
  liveProcesses.add(child);
  let output = '';
  const keepOutput = (chunk: Buffer): void => {
    // The server logs every request; keep the start and the most recent part for failure messages.
    output = (output + chunk.toString('utf8')).slice(-64_000);
  };
  child.stdout?.on('data', keepOutput);
  child.stderr?.on('data', keepOutput);
  const exited = new Promise<void>((resolveExit) => {
    child.once('exit', () => {
      liveProcesses.delete(child);
      resolveExit();
    });
  });
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
        await exited;
        clearTimeout(timer);
      }
    })();
    return stopping;
  };

  const url = `http://127.0.0.1:${port}`;
  const readyTimeoutMs = options.readyTimeoutMs ?? 20_000;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (spawnError !== undefined) throw new Error(`llama-server did not start: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      if (/bind|address already in use/i.test(output)) throw new PortTakenError(output);
      throw new Error(`llama-server exited before it was ready:\n${output}`);
    }
    if (await isHealthy(url)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-server not ready within ${readyTimeoutMs} ms:\n${output}`);
    }
    await new Promise((wake) => setTimeout(wake, 50));
  }
  return { url, chatBaseUrl: `${url}/v1`, port, modelPath, output: () => output, stop };
}

/** True once `GET /health` answers `{"status":"ok"}` (it answers 503 while the model loads). */
async function isHealthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1_000) });
    const body = (await response.json()) as { status?: unknown };
    return response.ok && body.status === 'ok';
  } catch {
    return false;
  }
}
