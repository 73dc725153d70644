/**
 * The `tpx` commands: argument parsing (node's `util.parseArgs`), wiring and exit codes. No protocol
 * logic lives here.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isTransportError, TransportError } from '../errors.js';
import { startMockModel, parseMockScript } from '../mock-model/mock-model.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { isLoopbackHost, startServer } from '../server/start-server.js';
import { createTransport } from '../transport/create-transport.js';
import type { ModelTransport } from '../transport/types.js';
import { drainRequested, isWorkerProcess } from '../server/workers.js';
import { runDemo } from './demo.js';
import {
  deferredTransportObserver,
  OPERATIONS_HELP,
  OPERATIONS_OPTIONS,
  readOperations,
  serveWithWorkers,
  startObservability,
} from './serve-operations.js';
import { EXIT_EXCHANGE_ERROR, EXIT_OK, EXIT_USAGE, UsageError, type CliIo } from './output.js';

export const HELP: Record<string, string> = {
  main: `tpx — one Anthropic Messages interface over Anthropic or any OpenAI-compatible endpoint

Usage: tpx <command> [options]

Commands:
  serve        run a local Messages-compatible proxy (POST /v1/messages, …)
  send         send one Messages request from a JSON file or stdin
  doctor       show which provider is selected and why, and check the endpoint
  mock-model   run a scripted OpenAI-compatible model server (offline testing)
  demo         run a complete tool-use round trip against a local scripted model

Options:
  -h, --help     show help (also: tpx <command> --help)
  -v, --version  show the version

Provider selection (read once at start-up):
  ANTHROPIC_API_KEY                         → anthropic (native Messages)
  else TPX_OAUTH_TOKEN / TPX_OAUTH_TOKEN_FILE / TPX_OAUTH_TOKEN_COMMAND + TPX_BASE_URL
                                            → tpx (Chat Completions, translated; TPX_DIALECT picks the server profile)
  else                                      → none (every exchange fails with 401)

Exit codes: 0 ok, 1 the exchange failed, 2 usage or configuration error.
`,
  serve: `Usage: tpx serve [--host 127.0.0.1] [--port 8787] [--insecure-no-auth] [--log-bodies] [--workers n]

Runs a Messages-compatible HTTP proxy over the selected provider:
  POST /v1/messages (JSON and SSE), POST /v1/messages/count_tokens, GET /v1/models,
  GET /healthz (liveness), GET /readyz (503 while draining), GET /metrics (Prometheus)

Options:
  --host <address>      address to bind (default 127.0.0.1)
  --port <number>       port to listen on (default 8787; 0 picks a free one)
  --insecure-no-auth    allow binding a non-loopback address without TPX_PROXY_TOKEN
  --allow-origin <url>  let web pages of this origin call the proxy (repeatable; TPX_ALLOWED_ORIGINS)
  --public-host <name>  accept this name in Host besides loopback ones (repeatable; TPX_PUBLIC_HOSTS)
  --log-bodies          include request and response bodies in the logs (debugging only)
  --wire <chat|responses>  tpx: Chat Completions or the OpenAI Responses API upstream [TPX_WIRE]
${OPERATIONS_HELP}
Environment: TPX_PROXY_TOKEN — when set, clients must present it (x-api-key or Authorization: Bearer).
Clients' own credentials are never forwarded upstream. SIGINT/SIGTERM: finish in-flight exchanges, exit 0.
`,
  send: `Usage: tpx send [file|-] [--stream]

Sends one Messages request (JSON, from a file or stdin) through the selected provider and prints the
Message as JSON, or with --stream the text as it arrives.

Options:
  --stream    stream the answer and print text as it arrives
`,
  doctor: `Usage: tpx doctor [--probe] [--model name]

Shows which provider is selected and why (never a secret) — for tpx also the dialect profile and where
the token comes from — checks that the endpoint is reachable and accepts the credentials, and prints a
fix for each failure.

Options:
  --probe          also send one tiny request (16 output tokens at most) and report the answer
  --model <name>   the model for the probe (default claude-haiku-4-5; the tpx path sends TPX_MODEL when set)
`,
  'mock-model': `Usage: tpx mock-model [--host 127.0.0.1] [--port 0] [--script file.json] [--token T] [--model name]

Runs an OpenAI-compatible scripted model server: POST /v1/chat/completions (JSON and streaming),
GET /v1/models. Without a script it calls the offered tools with arguments built from their schemas,
then answers in text that mentions the tool results. See docs/mock-model.md for the script format.
`,
  demo: `Usage: tpx demo

Starts tpx mock-model on a free loopback port, selects the tpx provider against it, and runs a short
agent loop with two local tools (add, now), printing every exchange. Needs no network or credentials.
`,
};

/** The model a `doctor --probe` asks when none is named (the tpx path sends TPX_MODEL instead when set). */
const DEFAULT_PROBE_MODEL = 'claude-haiku-4-5';

function version(): string {
  const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return packageJson.version;
}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

function parse(args: string[], options: OptionSpec, allowPositionals: boolean): ParsedArgs {
  try {
    const parsed = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
      strict: true,
    });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function parsePort(value: string | boolean | undefined, fallback: number): number {
  if (value === undefined || typeof value === 'boolean') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port must be a whole number from 0 to 65535, got ${value}`);
  return port;
}

/** A repeatable flag's values, else the comma-separated variable's; the flag wins when given. */
function listOption(flag: unknown, variable: string | undefined): string[] {
  const values = Array.isArray(flag) ? flag.map(String) : (variable ?? '').split(',');
  return values.map((value) => value.trim()).filter((value) => value !== '');
}

function describeError(error: unknown): string {
  if (isTransportError(error)) return `${error.code} (${error.status}): ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

async function serve(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(
    args,
    {
      host: { type: 'string' },
      port: { type: 'string' },
      'insecure-no-auth': { type: 'boolean' },
      'log-bodies': { type: 'boolean' },
      ...OPERATIONS_OPTIONS,
      'allow-origin': { type: 'string', multiple: true },
      'public-host': { type: 'string', multiple: true },
      wire: { type: 'string' },
    },
    false,
  );
  if (values['help'] === true) {
    io.stdout(HELP['serve']!);
    return EXIT_OK;
  }
  const operations = readOperations(values, io.env);
  if (operations.workers > 1 && !isWorkerProcess()) {
    return serveWithWorkers(
      operations,
      typeof values['host'] === 'string' ? values['host'] : '127.0.0.1',
      io,
    );
  }
  const observer = deferredTransportObserver();
  // --wire means what TPX_WIRE means (and wins over it); selection reports it as TPX_WIRE.
  const env = typeof values['wire'] === 'string' ? { ...io.env, TPX_WIRE: values['wire'] } : io.env;
  const transport = createTransport({ env, observer });
  const proxyToken = io.env['TPX_PROXY_TOKEN'];
  const serveOptions: Parameters<typeof startServer>[0] = {
    transport,
    host: typeof values['host'] === 'string' ? values['host'] : '127.0.0.1',
    port: parsePort(values['port'], 8787),
    insecureNoAuth: values['insecure-no-auth'] === true,
    logBodies: values['log-bodies'] === true,
  };
  if (proxyToken !== undefined && proxyToken !== '') serveOptions.proxyToken = proxyToken;
  const observability = await startObservability({
    operations,
    selection: transport.selection,
    env: io.env,
    host: serveOptions.host ?? '127.0.0.1',
    isWorker: isWorkerProcess(),
    observer,
  });
  if (observability.telemetry !== undefined) serveOptions.telemetry = observability.telemetry;
  if (observability.metrics !== undefined) serveOptions.metrics = observability.metrics;
  if (operations.pingIntervalMs !== undefined) serveOptions.pingIntervalMs = operations.pingIntervalMs;
  if (operations.drainDelayMs !== undefined) serveOptions.drainDelayMs = operations.drainDelayMs;
  if (operations.shutdownGraceMs !== undefined) serveOptions.shutdownGraceMs = operations.shutdownGraceMs;
  serveOptions.allowedOrigins = listOption(values['allow-origin'], io.env['TPX_ALLOWED_ORIGINS']);
  serveOptions.publicHosts = listOption(values['public-host'], io.env['TPX_PUBLIC_HOSTS']);
  const server = await startServer(serveOptions);
  if (!isLoopbackHost(serveOptions.host ?? '127.0.0.1') && serveOptions.proxyToken === undefined) {
    io.stderr(
      `warning: tpx serve is reachable beyond this machine (${String(serveOptions.host)}) and TPX_PROXY_TOKEN is not set: anyone who can reach it can use its credentials\n`,
    );
  }
  if (!isWorkerProcess())
    io.stderr(
      [
        `tpx serve listening on ${server.url}`,
        `  provider: ${transport.provider} (${transport.selection.reason})`,
        '',
        'Point Claude Code or any Messages client at it:',
        `  ANTHROPIC_BASE_URL=${server.url}`,
        serveOptions.proxyToken === undefined
          ? '  ANTHROPIC_API_KEY=unused   # any value; the proxy uses its own start-up credentials'
          : '  ANTHROPIC_AUTH_TOKEN="$TPX_PROXY_TOKEN"   # the proxy requires its token',
        '',
      ].join('\n'),
    );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      io.stderr('tpx serve: shutting down, finishing in-flight exchanges\n');
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // A worker drains when its primary says so (the primary got the signal).
    void drainRequested().then(stop);
  });
  await server.close();
  await transport.close();
  await observability.close();
  return EXIT_OK;
}

async function send(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { stream: { type: 'boolean' } }, true);
  if (values['help'] === true) {
    io.stdout(HELP['send']!);
    return EXIT_OK;
  }
  if (positionals.length > 1) throw new UsageError('tpx send takes one request file (or - for stdin)');
  const source = positionals[0] ?? '-';
  let text: string;
  try {
    text = source === '-' ? await io.readStdin() : readFileSync(source, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${source}: ${(error as { code?: string }).code ?? String(error)}`);
  }
  let request: MessagesRequest;
  try {
    request = JSON.parse(text) as MessagesRequest;
  } catch (error) {
    throw new UsageError(
      `${source === '-' ? 'stdin' : source} is not valid JSON: ${(error as Error).message}`,
    );
  }
  const transport = createTransport({ env: io.env });
  try {
    if (values['stream'] === true) {
      let stopReason: string | null = null;
      for await (const event of transport.stream(request)) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
          io.stdout(event.delta.text);
        if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
          io.stdout(
            `\n[tool_use ${(event.content_block as { id: string }).id} ${(event.content_block as { name: string }).name}]`,
          );
        }
        if (event.type === 'message_delta') stopReason = event.delta.stop_reason;
      }
      io.stdout(`\n`);
      io.stderr(`stop_reason: ${String(stopReason)}\n`);
    } else {
      const message = await transport.send(request);
      io.stdout(`${JSON.stringify(message, null, 2)}\n`);
    }
    return EXIT_OK;
  } catch (error) {
    io.stderr(`tpx send: ${describeError(error)}\n`);
    return isTransportError(error) && (error.code === 'MODEL_ECONFIG' || error.code === 'MODEL_EINVAL')
      ? EXIT_USAGE
      : EXIT_EXCHANGE_ERROR;
  } finally {
    await transport.close();
  }
}

/** The fix to suggest for each way the endpoint check can fail. */
function fixFor(error: unknown, transport: ModelTransport): string {
  if (!isTransportError(error)) return 'unexpected failure; run with a debugger or report it';
  const base = transport.provider === 'anthropic' ? 'ANTHROPIC_BASE_URL' : 'TPX_BASE_URL';
  switch (error.code) {
    case 'MODEL_EAUTH':
      return transport.provider === 'none'
        ? 'set ANTHROPIC_API_KEY, or TPX_OAUTH_TOKEN (or TPX_OAUTH_TOKEN_FILE / TPX_OAUTH_TOKEN_COMMAND) with TPX_BASE_URL'
        : 'the endpoint refused the credentials: check the key or token, and that it has not expired';
    case 'MODEL_ETRANSPORT':
    case 'MODEL_ETIMEOUT':
      return `the endpoint cannot be reached: check ${base}, that the server is running, and the network`;
    case 'MODEL_EHTTP':
      return error.status === 404
        ? `the endpoint answered 404: check that ${base} is the API root (for OpenAI-compatible servers it usually ends in /v1)`
        : `the endpoint answered ${error.status}: see the message above`;
    case 'MODEL_EPROTO':
      return `the endpoint did not answer like the expected API: check ${base}`;
    case 'MODEL_EINVAL':
    case 'MODEL_EPAIRING':
    case 'MODEL_EABORTED':
    case 'MODEL_ETOOBIG':
    case 'MODEL_ECONFIG':
      return 'see the message above';
  }
}

/** What the token source does, for each kind (never the token). */
const TOKEN_SOURCE_NOTES: Record<'static' | 'file' | 'command', string> = {
  static: 'a fixed token, read once at start-up',
  file: 're-read when the file changes (checked at most once per exchange, and after a 401)',
  command: 'run at start-up and again when the endpoint answers 401',
};

/** The `tpx` dialect and token source lines of `tpx doctor`; empty for other providers. */
function describeTpxSetup(transport: ModelTransport): string {
  const { dialect, tokenSource } = transport.selection;
  let text = '';
  if (dialect !== undefined) text += `dialect: ${dialect.name}\n  why: ${dialect.reason}\n`;
  const { wire } = transport.selection;
  if (wire !== undefined) text += `wire: ${wire.name}\n  why: ${wire.reason}\n`;
  if (tokenSource !== undefined) {
    text += `token source: ${tokenSource.kind} (${tokenSource.origin})\n  ${TOKEN_SOURCE_NOTES[tokenSource.kind]}\n`;
  }
  return text;
}

async function doctor(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(args, { probe: { type: 'boolean' }, model: { type: 'string' } }, false);
  if (values['help'] === true) {
    io.stdout(HELP['doctor']!);
    return EXIT_OK;
  }
  let transport: ModelTransport;
  try {
    transport = createTransport({ env: io.env });
  } catch (error) {
    io.stdout(`configuration: invalid\n  ${describeError(error)}\n`);
    return EXIT_USAGE;
  }
  try {
    io.stdout(`provider: ${transport.provider}\n  why: ${transport.selection.reason}\n`);
    io.stdout(describeTpxSetup(transport));
    if (transport.provider === 'none') {
      io.stdout(`endpoint: none\n  fix: ${fixFor(new TransportError('MODEL_EAUTH', ''), transport)}\n`);
      return EXIT_EXCHANGE_ERROR;
    }
    if (transport.listModels === undefined) {
      io.stdout('endpoint: not checked\n');
      return EXIT_OK;
    }
    try {
      await transport.listModels({ timeoutMs: 10_000, maxRetries: 0 });
      io.stdout('endpoint: reachable, credentials accepted\n');
    } catch (error) {
      io.stdout(
        `endpoint: check failed\n  error: ${describeError(error)}\n  fix: ${fixFor(error, transport)}\n`,
      );
      return EXIT_EXCHANGE_ERROR;
    }
    if (values['probe'] !== true) return EXIT_OK;
    // One tiny real exchange: the only way to know that the model answers, not just the server.
    const model = typeof values['model'] === 'string' ? values['model'] : DEFAULT_PROBE_MODEL;
    try {
      const message = await transport.send(
        { model, max_tokens: 16, messages: [{ role: 'user', content: 'Reply with the word ok.' }] },
        { timeoutMs: 30_000, maxRetries: 0 },
      );
      io.stdout(
        `probe: the model answered (stop_reason ${String(message.stop_reason)}, ${message.usage.output_tokens} output tokens)\n`,
      );
      return EXIT_OK;
    } catch (error) {
      io.stdout(`probe: failed\n  error: ${describeError(error)}\n  fix: ${fixFor(error, transport)}\n`);
      return EXIT_EXCHANGE_ERROR;
    }
  } finally {
    await transport.close();
  }
}

async function mockModel(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(
    args,
    {
      host: { type: 'string' },
      port: { type: 'string' },
      script: { type: 'string' },
      token: { type: 'string' },
      model: { type: 'string' },
    },
    false,
  );
  if (values['help'] === true) {
    io.stdout(HELP['mock-model']!);
    return EXIT_OK;
  }
  const options: Parameters<typeof startMockModel>[0] = {
    host: typeof values['host'] === 'string' ? values['host'] : '127.0.0.1',
    port: parsePort(values['port'], 0),
  };
  if (typeof values['token'] === 'string') options.token = values['token'];
  if (typeof values['model'] === 'string') options.model = values['model'];
  if (typeof values['script'] === 'string') {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(values['script'], 'utf8'));
    } catch (error) {
      throw new UsageError(`cannot load the script ${values['script']}: ${(error as Error).message}`);
    }
    try {
      options.script = parseMockScript(json);
    } catch (error) {
      throw new UsageError(`the script ${values['script']} is invalid: ${(error as Error).message}`);
    }
  }
  const server = await startMockModel(options);
  io.stdout(`tpx mock-model listening on ${server.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  return EXIT_OK;
}

/** Runs the CLI with the given arguments; resolves to the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        io.stdout(HELP['main']!);
        return command === undefined ? EXIT_USAGE : EXIT_OK;
      case '-v':
      case '--version':
        io.stdout(`${version()}\n`);
        return EXIT_OK;
      case 'serve':
        return await serve(rest, io);
      case 'send':
        return await send(rest, io);
      case 'doctor':
        return await doctor(rest, io);
      case 'mock-model':
        return await mockModel(rest, io);
      case 'demo': {
        const { values } = parse(rest, {}, false);
        if (values['help'] === true) {
          io.stdout(HELP['demo']!);
          return EXIT_OK;
        }
        return await runDemo(io);
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(
        `tpx: ${error.message}\nRun 'tpx ${command !== undefined && command in HELP ? `${command} ` : ''}--help' for usage.\n`,
      );
      return EXIT_USAGE;
    }
    if (isTransportError(error) && error.code === 'MODEL_ECONFIG') {
      io.stderr(`tpx: configuration error: ${error.message}\n`);
      return EXIT_USAGE;
    }
    io.stderr(`tpx: ${describeError(error)}\n`);
    return EXIT_EXCHANGE_ERROR;
  }
}
