/**
 * The `tpx` commands: argument parsing (node's `util.parseArgs`), wiring and exit codes. No protocol
 * logic lives here.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { isTransportError } from '../errors.js';
import { startMockModel, parseMockScript } from '../mock-model/mock-model.js';
import { loadReplay } from './load-replay.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { createInstanceId } from '../server/loop-guard.js';
import { isLoopbackHost, startServer } from '../server/start-server.js';
import { drainRequested, isWorkerProcess } from '../server/worker-process.js';
import { workerLiveExchangeSource } from '../server/live-view-cluster.js';
import { CLAUDE_HELP, runClaude } from './claude.js';
import { createCliLogger } from './cli-logger.js';
import { runDemo } from './demo.js';
import { describeError, parse, parsePort } from './parse-flags.js';
import { DOCTOR_HELP, runDoctor } from './doctor.js';
import {
  PROXY_FLAGS,
  createCliTransport,
  proxyTransportOptions,
  readProxySettings,
} from './proxy-settings.js';
import { describeSetup, probeUpstream } from './startup-report.js';
import { OPERATIONS_HELP, OPERATIONS_OPTIONS } from './serve-flags.js';
import { JOURNAL_HELP, JOURNAL_OPTIONS, readJournalFlags } from './journal-flags.js';
import { JOURNAL_COMMAND_HELP, runJournal } from './journal.js';
import { EXIT_EXCHANGE_ERROR, EXIT_OK, EXIT_USAGE, UsageError, type CliIo } from './output.js';

export const HELP: Record<string, string> = {
  main: `tpx — one Anthropic Messages interface over Anthropic or any OpenAI-compatible endpoint

Usage: tpx <command> [options]

Commands:
  claude       run Claude Code against the configured upstream (starts a proxy for it)
  serve        run a local Messages-compatible proxy (POST /v1/messages, …)
  send         send one Messages request from a JSON file or stdin
  doctor       show what tpx would do, check the upstream, and print a fix for each failure
  journal      list the exchanges of a journal (tpx serve --journal DIR), or show one
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
  GET /healthz (liveness), GET /readyz (503 while draining), GET /metrics (Prometheus),
  GET /tpx/status (a live page of the latest exchanges), GET /tpx/exchanges (the same as JSON)

Options:
  --host <address>      address to bind (default 127.0.0.1)
  --port <number>       port to listen on (default 8787; 0 picks a free one)
  --insecure-no-auth    allow binding a non-loopback address without TPX_PROXY_TOKEN
  --allow-origin <url>  let web pages of this origin call the proxy (repeatable; TPX_ALLOWED_ORIGINS)
  --public-host <name>  accept this name in Host besides loopback ones (repeatable; TPX_PUBLIC_HOSTS)
  --log-bodies          include request and response bodies in the logs (debugging only)

Upstream (each flag equals its variable; the flag wins):
  --base-url <url>      the OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 (TPX_BASE_URL)
  --token <token>       the upstream's bearer token (TPX_OAUTH_TOKEN); a local server without auth
                        accepts any value, e.g. --token local
  --dialect <name>      the server profile: vllm, llamacpp, ollama, openrouter, … (TPX_DIALECT)
  --wire <chat|responses>  Chat Completions or the OpenAI Responses API upstream (TPX_WIRE; default chat)
  --model-map <rules>   pattern=model rules, first match wins: '*haiku*=qwen3-4b,*=qwen3-32b' (TPX_MODEL_MAP)
  --max-tokens <n>      cap on max_tokens sent upstream (TPX_MAX_TOKENS)
  --drop-beta <names>   with ANTHROPIC_API_KEY: betas left out of anthropic-beta, comma-separated, for
                        Messages-compatible upstreams that refuse them (TPX_DROP_BETAS)
  --text-tool-calls <on|off>  read tool calls a model wrote as text (<tool_call>{…}</tool_call>,
                        [TOOL_CALLS]…, a bare {"name","arguments"} answer) as tool calls; default on
                        for vllm, llamacpp, ollama, openai-generic (TPX_TEXT_TOOL_CALLS)
  --timeout <duration>  whole exchange: 600, 30s, 500ms, 10m (TPX_TIMEOUT)
  --first-byte-timeout <duration>   until the upstream's response headers (TPX_FIRST_BYTE_TIMEOUT)
  --idle-timeout <duration>         longest silence inside a response (TPX_IDLE_TIMEOUT)
  --max-retries <n>     retries before anything reached the client (TPX_MAX_RETRIES)
  --config <file>       several upstreams and the routes between them, with fallback and a breaker
                        (TPX_CONFIG; see docs/routes.md); the upstream flags above then do not apply
  --log-level <level>   debug, info, warn, error, silent (TPX_LOG_LEVEL); lines are human-readable on a
                        terminal, JSON otherwise
${OPERATIONS_HELP}${JOURNAL_HELP}
Environment: TPX_PROXY_TOKEN — when set, clients must present it (x-api-key or Authorization: Bearer).
Clients' own credentials are never forwarded upstream. SIGINT/SIGTERM: finish in-flight exchanges, exit 0.
`,
  send: `Usage: tpx send [file|-] [--stream] [--wire chat|responses]

Sends one Messages request (JSON, from a file or stdin) through the selected provider and prints the
Message as JSON, or with --stream the text as it arrives.

Options:
  --stream    stream the answer and print text as it arrives
  --base-url, --token, --dialect, --wire, --model-map, --max-tokens, --config, --timeout …   as for tpx serve
`,
  doctor: DOCTOR_HELP,
  claude: CLAUDE_HELP,
  journal: JOURNAL_COMMAND_HELP,
  'mock-model': `Usage: tpx mock-model [--host 127.0.0.1] [--port 0] [--script file.json | --replay journal] [--token T] [--model name]

Runs an OpenAI-compatible scripted model server: POST /v1/chat/completions and POST /v1/responses
(JSON and streaming), GET /v1/models. Without a script it calls the offered tools with arguments built from their schemas,
then answers in text that mentions the tool results. See docs/mock-model.md for the script format.

  --replay <file|dir>  answer the requests a journal recorded (tpx serve --journal DIR) with their recorded
                       answers, and any other with a 404 naming the nearest recorded one (docs/journal.md)
`,
  demo: `Usage: tpx demo

Starts tpx mock-model on a free loopback port, selects the tpx provider against it, and runs a short
agent loop with two local tools (add, now), printing every exchange. Needs no network or credentials.
`,
};

function version(): string {
  const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return packageJson.version;
}

/** A repeatable flag's values, else the comma-separated variable's; the flag wins when given. */
function listOption(flag: unknown, variable: string | undefined): string[] {
  const values = Array.isArray(flag) ? flag.map(String) : (variable ?? '').split(',');
  return values.map((value) => value.trim()).filter((value) => value !== '');
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
      ...JOURNAL_OPTIONS,
      'allow-origin': { type: 'string', multiple: true },
      'public-host': { type: 'string', multiple: true },
      ...PROXY_FLAGS,
    },
    false,
  );
  if (values['help'] === true) {
    io.stdout(HELP['serve']!);
    return EXIT_OK;
  }
  // Loaded only to serve: the other commands start without prom-client and the cluster supervisor.
  const { deferredTransportObserver, readOperations, serveWithWorkers, startObservability, warmUp } =
    await import('./serve-operations.js');
  const operations = readOperations(values as Parameters<typeof readOperations>[0], io.env);
  const journalFlags = readJournalFlags(values, io.env);
  // Each upstream flag means what its variable means (and wins over it): --wire is TPX_WIRE.
  const settings = readProxySettings(values, io.env);
  if (operations.workers > 1 && !isWorkerProcess()) {
    return serveWithWorkers(
      operations,
      typeof values['host'] === 'string' ? values['host'] : '127.0.0.1',
      io,
      { ...settings.transportOptions, env: settings.env },
    );
  }
  const observer = deferredTransportObserver();
  const env = settings.env;
  const instanceId = createInstanceId();
  const transport = createCliTransport(
    { ...proxyTransportOptions(settings, instanceId), env, observer },
    settings,
  );
  const proxyToken = io.env['TPX_PROXY_TOKEN'];
  const serveOptions: Parameters<typeof startServer>[0] = {
    transport,
    instanceId,
    logger: createCliLogger(settings.logLevel, process.stdout.isTTY),
    host: typeof values['host'] === 'string' ? values['host'] : '127.0.0.1',
    port: parsePort(values['port'], 8787),
    insecureNoAuth: values['insecure-no-auth'] === true,
    logBodies: values['log-bodies'] === true,
    ...journalFlags,
  };
  // With --workers, the live view shows every worker's exchanges, gathered through the primary.
  if (isWorkerProcess()) serveOptions.liveExchangeSource = workerLiveExchangeSource;
  // A client's request body gets the same patience as an upstream's answer.
  const idleTimeoutMs = settings.transportOptions.idleTimeoutMs;
  if (idleTimeoutMs !== undefined) serveOptions.bodyIdleTimeoutMs = idleTimeoutMs;
  if (proxyToken !== undefined && proxyToken !== '') serveOptions.proxyToken = proxyToken;
  const observability = await startObservability({
    operations,
    selection: transport.selection,
    env: io.env,
    host: serveOptions.host ?? '127.0.0.1',
    isWorker: isWorkerProcess(),
    observer,
  });
  // Without metrics or OTEL_*, no telemetry at all (not even the OpenTelemetry API's no-op spans).
  serveOptions.telemetry = observability.telemetry ?? false;
  if (observability.metrics !== undefined) serveOptions.metrics = observability.metrics;
  const upstreamStates = transport.upstreamStates?.bind(transport);
  if (upstreamStates !== undefined) observability.proxyMetrics?.watchUpstreams(upstreamStates);
  if (operations.pingIntervalMs !== undefined) serveOptions.pingIntervalMs = operations.pingIntervalMs;
  if (operations.drainDelayMs !== undefined) serveOptions.drainDelayMs = operations.drainDelayMs;
  if (operations.shutdownGraceMs !== undefined) serveOptions.shutdownGraceMs = operations.shutdownGraceMs;
  serveOptions.allowedOrigins = listOption(values['allow-origin'], io.env['TPX_ALLOWED_ORIGINS']);
  serveOptions.publicHosts = listOption(values['public-host'], io.env['TPX_PUBLIC_HOSTS']);
  await warmUp(transport.selection);
  const server = await startServer(serveOptions);
  // Listen for the stop signal before anything else is awaited: /readyz already answers, so a
  // supervisor may send SIGTERM while the start-up probe below is still waiting on the upstream.
  const stopped = new Promise<void>((resolve) => {
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
  if (!isLoopbackHost(serveOptions.host ?? '127.0.0.1') && serveOptions.proxyToken === undefined) {
    io.stderr(
      `warning: tpx serve is reachable beyond this machine (${String(serveOptions.host)}) and TPX_PROXY_TOKEN is not set: anyone who can reach it can use its credentials\n`,
    );
  }
  if (!isWorkerProcess())
    io.stderr(
      [
        `tpx serve listening on ${server.url}`,
        ...describeSetup(transport, settings.env, settings.flagsGiven),
        serveOptions.proxyToken === undefined
          ? '  inbound auth: none (any client key is accepted; the proxy uses its own start-up credentials)'
          : '  inbound auth: clients must present TPX_PROXY_TOKEN',
        ...(await probeUpstream(transport)),
        '',
        // Set for one command only: exported in this shell, a restarted proxy would forward to itself.
        'Point Claude Code at it (or run `tpx claude`, which does this for you):',
        serveOptions.proxyToken === undefined
          ? `  ANTHROPIC_BASE_URL=${server.url} ANTHROPIC_AUTH_TOKEN=unused claude`
          : `  ANTHROPIC_BASE_URL=${server.url} ANTHROPIC_AUTH_TOKEN="$TPX_PROXY_TOKEN" claude`,
        '',
      ].join('\n'),
    );
  await stopped;
  await server.close();
  await transport.close();
  await observability.close();
  return EXIT_OK;
}

async function send(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { stream: { type: 'boolean' }, ...PROXY_FLAGS }, true);
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
  const settings = readProxySettings(values, io.env);
  const transport = createCliTransport({ ...settings.transportOptions, env: settings.env }, settings);
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

async function mockModel(args: string[], io: CliIo): Promise<number> {
  const { values } = parse(
    args,
    {
      host: { type: 'string' },
      port: { type: 'string' },
      script: { type: 'string' },
      token: { type: 'string' },
      model: { type: 'string' },
      replay: { type: 'string' },
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
    // Nothing outside this process can read the recorded requests, and a long run would hold them all.
    maxRecordedRequests: 0,
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
  if (typeof values['replay'] === 'string') {
    if (options.script !== undefined) throw new UsageError('--replay and --script cannot be used together');
    options.replay = await loadReplay(values['replay'], io);
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
        return await runDoctor(rest, io);
      case 'claude':
        return await runClaude(rest, io);
      case 'mock-model':
        return await mockModel(rest, io);
      case 'journal':
        return await runJournal(rest, io);
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
