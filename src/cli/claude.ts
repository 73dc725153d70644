/**
 * `tpx claude [tpx options] [--] [claude arguments…]`: Claude Code on the configured upstream in one
 * command. It starts the proxy in this process on a free loopback port with a fresh random proxy token,
 * runs `claude` (from PATH, or `--claude-bin`) with `ANTHROPIC_BASE_URL` and `ANTHROPIC_AUTH_TOKEN` set
 * to that proxy and token (and `ANTHROPIC_API_KEY` removed from its environment, so it cannot compete),
 * passes the arguments, the terminal and signals through, and exits with Claude Code's exit code after
 * stopping the proxy.
 *
 * tpx's own options come first; the first argument that is not one of them (or everything after `--`)
 * starts Claude Code's arguments: `tpx claude --base-url http://127.0.0.1:8000/v1 -p "hi"`.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:os';
import { pino, type Logger } from 'pino';
import { createInstanceId } from '../server/loop-guard.js';
import { startServer } from '../server/start-server.js';
import { EXIT_OK, UsageError, type CliIo } from './output.js';
import { parse } from './parse-flags.js';
import { exchangeSummaryStream } from './exchange-summary.js';
import type { Observability } from './serve-operations.js';
import {
  LOG_LEVELS,
  PROXY_FLAGS,
  createCliTransport,
  proxyTransportOptions,
  readProxySettings,
  type LogLevel,
} from './proxy-settings.js';
import { CLAUDE_CODE_MODELS, warnOfSmallWindow } from './context-fit.js';
import { describeSetup, probeUpstreamReport } from './startup-report.js';

export const CLAUDE_HELP = `Usage: tpx claude [tpx options] [--] [claude arguments…]

Runs Claude Code against the configured upstream: starts the proxy on a free loopback port with a fresh
random token, runs \`claude\` with ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN pointing at it, passes the
arguments, terminal, signals and exit code through, and stops the proxy when Claude Code exits.

  tpx claude --base-url http://127.0.0.1:8000/v1 --token local -p "say hi"

tpx options come first; the first other argument (or everything after --) goes to claude.

Options:
  --base-url <url>        the OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 (TPX_BASE_URL)
  --token <token>         the upstream's bearer token (TPX_OAUTH_TOKEN); a local server without auth
                          accepts any value, e.g. --token local
  --dialect <name>        the server profile: vllm, llamacpp, ollama, openrouter, … (TPX_DIALECT)
  --model-map <rules>     e.g. '*haiku*=qwen3-4b,*=qwen3-32b' (TPX_MODEL_MAP)
  --max-tokens <n>        cap on max_tokens sent upstream (TPX_MAX_TOKENS)
  --timeout, --first-byte-timeout, --idle-timeout <duration>   600, 30s, 500ms, 10m
  --max-retries <n>       (TPX_MAX_RETRIES)
  --log-file <path|->     also write the proxy's log (JSON lines) to this file, or to stderr with -
  --log-level <level>     debug, info, warn, error (TPX_LOG_LEVEL; for --log-file)
  --log-bodies            put request and response bodies (the caller's and each one sent upstream) in
                          the --log-file log (debugging only: bodies hold whole conversations)
  --metrics-port <n>      serve GET /metrics on this loopback port without a token (default: on the
                          proxy's port, with this run's token, both printed at start)
  --claude-bin <path>     the Claude Code executable (default: claude on PATH; TPX_CLAUDE_BIN)

While Claude Code runs, tpx prints one line per exchange on stderr (the model asked for → the model that
answered, tokens, time, status) and the full explanation of any exchange that failed.
`;

const CLAUDE_FLAGS = {
  ...PROXY_FLAGS,
  'claude-bin': { type: 'string' },
  'log-file': { type: 'string' },
  'log-bodies': { type: 'boolean' },
  'metrics-port': { type: 'string' },
} as const;

type ClaudeFlag = keyof typeof CLAUDE_FLAGS;

/** Splits the arguments into tpx's (known flags, at the start) and Claude Code's (the rest). */
export function splitArguments(args: readonly string[]): { own: string[]; forwarded: string[] } {
  const own: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!;
    if (arg === '--') return { own, forwarded: args.slice(index + 1) };
    if (arg === '--help' || arg === '-h') {
      own.push(arg);
      continue;
    }
    const name = arg.startsWith('--') ? arg.slice(2).split('=')[0]! : '';
    if (!(name in CLAUDE_FLAGS)) return { own, forwarded: args.slice(index) };
    own.push(arg);
    if (!arg.includes('=') && CLAUDE_FLAGS[name as ClaudeFlag].type === 'string') {
      const value = args[index + 1];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      own.push(value);
      index++;
    }
  }
  return { own, forwarded: [] };
}

/**
 * The proxy's logger: every exchange summarised on stderr ({@link exchangeSummaryStream}), and with
 * `--log-file` the JSON lines too, to that file or (`-`) to stderr.
 */
function proxyLogger(file: string | undefined, level: LogLevel | undefined, io: CliIo): Logger {
  const streams: { level: LogLevel; stream: { write(line: string): void } }[] = [
    { level: 'info', stream: exchangeSummaryStream((line) => io.stderr(line)) },
  ];
  if (file !== undefined) {
    const destination =
      file === '-'
        ? pino.destination({ dest: 2, sync: true })
        : pino.destination({ dest: file, sync: false, mkdir: true });
    streams.push({ level: level ?? 'info', stream: destination });
  }
  const levels = streams.map((entry) => entry.level);
  const lowest = LOG_LEVELS.find((candidate) => levels.includes(candidate)) ?? 'info';
  return pino({ name: 'tpx-claude', level: lowest }, pino.multistream(streams));
}

/** Runs `tpx claude`; resolves to Claude Code's exit code (128 + the signal number when a signal ended it). */
export async function runClaude(args: string[], io: CliIo): Promise<number> {
  const { own, forwarded } = splitArguments(args);
  const { values } = parse(own, CLAUDE_FLAGS, false);
  if (values['help'] === true) {
    io.stdout(CLAUDE_HELP);
    return EXIT_OK;
  }
  const settings = readProxySettings(values, io.env);
  const logFile = typeof values['log-file'] === 'string' ? values['log-file'] : undefined;
  const logBodies = values['log-bodies'] === true;
  if (logBodies && logFile === undefined) {
    throw new UsageError('--log-bodies needs --log-file: a file, or - for stderr');
  }
  const metricsPort = readMetricsPort(values['metrics-port']);
  // Loaded only here, as by tpx serve: the other commands start without prom-client.
  const { deferredTransportObserver, startObservability } = await import('./serve-operations.js');
  const instanceId = createInstanceId();
  const observer = deferredTransportObserver();
  const transport = createCliTransport(
    { ...proxyTransportOptions(settings, instanceId), observer },
    settings,
  );
  const proxyToken = randomBytes(24).toString('base64url');
  let server: Awaited<ReturnType<typeof startServer>>;
  let observability: Observability | undefined;
  try {
    observability = await startObservability({
      operations: { workers: 1, metrics: true, ...(metricsPort === undefined ? {} : { metricsPort }) },
      selection: transport.selection,
      env: io.env,
      host: '127.0.0.1',
      isWorker: false,
      observer,
    });
    server = await startServer({
      transport,
      host: '127.0.0.1',
      port: 0,
      proxyToken,
      instanceId,
      logger: proxyLogger(logFile, settings.logLevel, io),
      logBodies,
      telemetry: observability.telemetry ?? false,
      ...(observability.metrics === undefined ? {} : { metrics: observability.metrics }),
    });
  } catch (error) {
    await observability?.close();
    await transport.close();
    throw error;
  }
  try {
    const probe = await probeUpstreamReport(transport);
    const windowWarning =
      probe.report === undefined ? [] : await warnOfSmallWindow(transport, probe.report, CLAUDE_CODE_MODELS);
    io.stderr(
      [
        `tpx claude: proxy on ${server.url} (a fresh token for this run)`,
        observability.metricsServer === undefined
          ? `  metrics: curl -H 'Authorization: Bearer ${proxyToken}' ${server.url}/metrics`
          : `  metrics: curl ${observability.metricsServer.url}/metrics`,
        ...describeSetup(transport, settings.env, settings.flagsGiven),
        ...probe.lines,
        ...windowWarning,
        '',
      ].join('\n'),
    );
    const binary =
      (typeof values['claude-bin'] === 'string' ? values['claude-bin'] : undefined) ??
      (io.env['TPX_CLAUDE_BIN']?.trim() || 'claude');
    const childEnv: Record<string, string | undefined> = {
      ...io.env,
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_AUTH_TOKEN: proxyToken,
    };
    // Claude Code would send a key it finds instead of (or next to) the token; the proxy has its own.
    delete childEnv['ANTHROPIC_API_KEY'];
    return await runChild(binary, forwarded, childEnv, io);
  } finally {
    await server.close();
    await transport.close();
    await observability.close();
  }
}

/** `--metrics-port`: a port number, or `undefined` when not given. */
function readMetricsPort(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new UsageError(`--metrics-port must be a whole number from 0 to 65535, got ${value}`);
  }
  return port;
}

const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function runChild(
  binary: string,
  args: string[],
  env: Record<string, string | undefined>,
  io: CliIo,
): Promise<number> {
  return new Promise<number>((resolve) => {
    const child = spawn(binary, args, { stdio: 'inherit', env });
    const forward = (signal: NodeJS.Signals) => {
      // Ctrl-C at a terminal reaches the whole foreground group, Claude Code included: sending it again
      // would count as a second press. Signals sent to tpx alone are passed on.
      if (signal === 'SIGINT' && process.stdin.isTTY) return;
      child.kill(signal);
    };
    for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
    const done = (code: number) => {
      for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
      resolve(code);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      io.stderr(
        error.code === 'ENOENT'
          ? `tpx claude: ${binary} not found: install Claude Code (npm install -g @anthropic-ai/claude-code) or pass --claude-bin /path/to/claude\n`
          : `tpx claude: cannot run ${binary}: ${error.message}\n`,
      );
      done(127);
    });
    child.once('exit', (code, signal) => {
      done(code ?? 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0)));
    });
  });
}
