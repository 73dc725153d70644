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
import {
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
  --log-file <path>       write the proxy's exchange log (JSON lines) there; default: no log
  --log-level <level>     debug, info, warn, error (TPX_LOG_LEVEL; with --log-file)
  --claude-bin <path>     the Claude Code executable (default: claude on PATH; TPX_CLAUDE_BIN)
`;

const CLAUDE_FLAGS = {
  ...PROXY_FLAGS,
  'claude-bin': { type: 'string' },
  'log-file': { type: 'string' },
} as const;

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
    if (!arg.includes('=')) {
      const value = args[index + 1];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      own.push(value);
      index++;
    }
  }
  return { own, forwarded: [] };
}

function proxyLogger(file: string | undefined, level: LogLevel | undefined): Logger | false {
  if (file === undefined) return false;
  return pino(
    { name: 'tpx-claude', level: level ?? 'info' },
    pino.destination({ dest: file, sync: false, mkdir: true }),
  );
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
  const instanceId = createInstanceId();
  const transport = createCliTransport(proxyTransportOptions(settings, instanceId), settings);
  const proxyToken = randomBytes(24).toString('base64url');
  const logFile = typeof values['log-file'] === 'string' ? values['log-file'] : undefined;
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      transport,
      host: '127.0.0.1',
      port: 0,
      proxyToken,
      instanceId,
      logger: proxyLogger(logFile, settings.logLevel),
    });
  } catch (error) {
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
  }
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
