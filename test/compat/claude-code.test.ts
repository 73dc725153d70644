/**
 * The real Claude Code CLI against tpx: every cell of upstream × wire × front runs `claude -p` (print
 * mode, stream-json, a fresh HOME, non-essential traffic off) once for a session and once for `/context`,
 * and checks that Claude Code starts, that a tool round trip completes (a `tool_use`, Claude Code runs the
 * tool, its `tool_result` goes back, the model answers), that the turn ends by itself (a `result` event
 * with `subtype: "success"`), and that `/context` reports a token count counted through the proxy.
 *
 * Upstreams: `tpx mock-model` on the Chat Completions and the Responses wire; a real llama.cpp server
 * with the plain and the strict chat template; and llama.cpp's own `/v1/messages` through the
 * `anthropic` provider. Fronts: `tpx serve` with Claude Code pointed at it, and `tpx claude`.
 *
 * Against the mock model Claude Code runs as a user runs it: its default tools and system prompt. The
 * llama.cpp models have a byte-level vocabulary (one token a byte), so Claude Code's whole first request
 * is about 53 000 tokens there and takes minutes to read on one core (and 15 000 tokens, still half a
 * minute, with only three tools); those cells give Claude Code a one-line system prompt, only its Read,
 * Glob and Grep tools, no skills and no tool search (about 8 000 tokens), with a 32 768-token context.
 * The tiny models also never choose a tool by themselves, so a tap between tpx and llama.cpp asks for
 * one (`tool_choice` required / any) on a conversation's first turn only: what comes back is still
 * llama.cpp's own tool call, and the turn after the tool results is the model's choice.
 *
 * The results are compared with `docs/compatibility.json`; `TPX_UPDATE_COMPATIBILITY=1` rewrites it and
 * the table in `docs/compatibility.md` instead (see {@link UPDATE_COMMAND}). Needs `npm run build`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isObject } from '../../src/protocol/is-object.js';
import { startTpxMockModel, startTpxServe, type TpxServe } from '../e2e/cli-process.js';
import { findLlamaServer, startLlamaServer, type LlamaServer } from '../real-server/llama-server.js';
import { startRecordingTap, type RecordingTap } from '../real-server/recording-tap.js';
import {
  CLAUDE_BIN,
  STREAM_JSON,
  createWorkspace,
  killLeftovers,
  locateClaudeCode,
  parseStreamJson,
  runClaudeCode,
  runTpxClaude,
  type ProcessResult,
  type Workspace,
} from './claude-code-cli.js';
import {
  UPDATE_COMMAND,
  comparable,
  readRecord,
  writeRecord,
  type CellResult,
  type CompatibilityRecord,
} from './compatibility-record.js';
import { readContextTokens, readExchangeLog, readSession, type LoggedExchange } from './read-claude-run.js';

const PROMPT = 'List the files in this folder, then read notes.txt and say what it is about.';
const LLAMA_CONTEXT = 32_768;
const MOCK_RUN_TIMEOUT_MS = 60_000;
const LLAMA_RUN_TIMEOUT_MS = 150_000;
const ALL_CELLS_TIMEOUT_MS = 400_000;
const UPDATING = process.env['TPX_UPDATE_COMPATIBILITY'] === '1';
const hasLlamaServer = findLlamaServer() !== undefined;

/** Claude Code's own tools, allowed to run without a prompt in print mode (as root too). */
const ALLOWED = ['--allowedTools', 'Read,Glob,Grep'];
/**
 * The llama.cpp cells: a one-line system prompt in place of Claude Code's own, three of its tools, no
 * skills (see the file's comment).
 */
const SMALL_PROMPT = [
  '--system-prompt',
  'You are Claude Code, working in the project folder. Use the tools to look at files before answering.',
  '--tools',
  'Read,Glob,Grep',
  '--disable-slash-commands',
];

/**
 * Without tool search Claude Code offers its tools as they are, with no `DeferredToolPlaceholder` (a tool
 * "never to call" that a model asked for any tool may still pick).
 */
const NO_TOOL_SEARCH = { ENABLE_TOOL_SEARCH: 'false' };

/** How tpx reaches one upstream. */
interface Upstream {
  label: string;
  wire: CellResult['wire'];
  tpxArgs: string[];
  env: Record<string, string>;
  claudeArgs: string[];
  /** Claude Code's own settings for these cells, beside {@link QUIET_ENV}. */
  claudeEnv: Record<string, string>;
  timeoutMs: number;
}

/**
 * The tap's rewrite for the tiny models: a request with tools on a conversation's first turn (no tool
 * result in it yet) asks for a tool call; every other request goes as Claude Code sent it.
 */
function askForAToolFirst(url: string, json: unknown): unknown {
  if (!isObject(json) || !Array.isArray(json['tools']) || json['tools'].length === 0) return undefined;
  const messages = Array.isArray(json['messages']) ? (json['messages'] as unknown[]) : [];
  if (url.startsWith('/v1/chat/completions')) {
    const answered = messages.some((message) => isObject(message) && message['role'] === 'tool');
    return answered ? undefined : { ...json, tool_choice: 'required' };
  }
  if (url.startsWith('/v1/messages') && !url.startsWith('/v1/messages/count_tokens')) {
    const answered = messages.some(
      (message) =>
        isObject(message) &&
        Array.isArray(message['content']) &&
        (message['content'] as unknown[]).some((block) => isObject(block) && block['type'] === 'tool_result'),
    );
    return answered ? undefined : { ...json, tool_choice: { type: 'any' } };
  }
  return undefined;
}

function sessionArgs(upstream: Upstream): string[] {
  return ['-p', PROMPT, ...STREAM_JSON, ...ALLOWED, ...upstream.claudeArgs];
}

/** `/context` is a command: `--disable-slash-commands` would turn it into a prompt. */
function contextArgs(upstream: Upstream): string[] {
  return [
    '-p',
    '/context',
    ...STREAM_JSON,
    ...upstream.claudeArgs.filter((arg) => arg !== '--disable-slash-commands'),
  ];
}

/** What one front gives back: the two runs and the exchange log of each. */
interface FrontRuns {
  session: ProcessResult;
  sessionLog: LoggedExchange[];
  context: ProcessResult;
  contextLog: LoggedExchange[];
}

/** One run of `claude args…` pointed at a `tpx serve` of its own; the log is read once the proxy stopped. */
async function throughServeOnce(
  upstream: Upstream,
  workspace: Workspace,
  args: string[],
): Promise<{ result: ProcessResult; log: LoggedExchange[] }> {
  const serve: TpxServe = await startTpxServe(upstream.tpxArgs, upstream.env);
  let result: ProcessResult;
  try {
    const env = { ...upstream.claudeEnv, ANTHROPIC_BASE_URL: serve.url, ANTHROPIC_AUTH_TOKEN: 'unused' };
    result = await runClaudeCode(claudeBinary, args, workspace, env, upstream.timeoutMs);
  } finally {
    await serve.stop();
  }
  // The exchange log goes to stdout, written asynchronously: complete once the process has exited.
  return { result, log: readExchangeLog(serve.stdout()) };
}

async function throughServe(upstream: Upstream, workspace: Workspace): Promise<FrontRuns> {
  const session = await throughServeOnce(upstream, workspace, sessionArgs(upstream));
  const context = await throughServeOnce(upstream, workspace, contextArgs(upstream));
  return {
    session: session.result,
    sessionLog: session.log,
    context: context.result,
    contextLog: context.log,
  };
}

async function throughTpxClaude(upstream: Upstream, workspace: Workspace): Promise<FrontRuns> {
  const logs = mkdtempSync(join(tmpdir(), 'tpx-compat-log-'));
  try {
    const run = async (claudeArgs: string[], name: string) => {
      const logFile = join(logs, name);
      const result = await runTpxClaude(
        claudeBinary,
        [...upstream.tpxArgs, '--log-file', logFile],
        claudeArgs,
        workspace,
        { ...upstream.claudeEnv, ...upstream.env },
        upstream.timeoutMs,
      );
      let log = '';
      try {
        log = readFileSync(logFile, 'utf8');
      } catch {
        // No log: the proxy never started; the checks say what is missing.
      }
      return { result, log: readExchangeLog(log) };
    };
    const session = await run(sessionArgs(upstream), 'session');
    const context = await run(contextArgs(upstream), 'context');
    return {
      session: session.result,
      sessionLog: session.log,
      context: context.result,
      contextLog: context.log,
    };
  } finally {
    rmSync(logs, { recursive: true, force: true });
  }
}

function seconds(durationMs: number): number {
  return Math.round(durationMs / 100) / 10;
}

function lastLines(text: string, count = 6): string {
  return text.trim().split('\n').slice(-count).join(' / ').slice(0, 600);
}

/** Turns one front's runs into a cell's result, with a precise note on what failed. */
function judge(upstream: Upstream, front: CellResult['front'], runs: FrontRuns): CellResult {
  const session = readSession(parseStreamJson(runs.session.stdout));
  const messagesExchanges = runs.sessionLog.filter((exchange) => exchange.path === '/v1/messages');
  const counts = runs.contextLog.filter((exchange) => exchange.path === '/v1/messages/count_tokens');
  const contextTokens = readContextTokens(parseStreamJson(runs.context.stdout));
  const checks = {
    starts: session.started && messagesExchanges.length > 0,
    toolRoundTrip: session.toolRoundTrip,
    endsByItself: session.result?.subtype === 'success' && !session.result.isError,
    contextCounts:
      contextTokens !== undefined &&
      contextTokens > 0 &&
      counts.length > 0 &&
      counts.every((exchange) => exchange.status === 200),
  };
  const notes: string[] = [];
  for (const exchange of [...runs.sessionLog, ...runs.contextLog]) {
    if (exchange.status !== 200) {
      notes.push(
        `${exchange.path} ${exchange.status} ${exchange.error ?? ''}: ${exchange.errorMessage ?? ''}`,
      );
    }
  }
  if (!session.started)
    notes.push(`no init event (exit ${String(runs.session.code)}): ${lastLines(runs.session.stderr)}`);
  if (session.result !== undefined && !checks.endsByItself) {
    notes.push(`result ${session.result.subtype}: ${session.result.text.slice(0, 300)}`);
  }
  if (session.result === undefined)
    notes.push(`no result event (exit ${String(runs.session.code)}, signal ${String(runs.session.signal)})`);
  if (!checks.toolRoundTrip) {
    notes.push(
      `tool calls ${JSON.stringify(session.toolCalls)}, results for ${JSON.stringify(session.toolResultIds)}`,
    );
  }
  if (!checks.contextCounts) {
    notes.push(
      `/context: ${String(contextTokens)} tokens, count_tokens statuses ${JSON.stringify(counts.map((c) => c.status))}; ${lastLines(runs.context.stdout, 2)}`,
    );
  }
  const pass = Object.values(checks).every(Boolean);
  const cell: CellResult = {
    upstream: upstream.label,
    wire: upstream.wire,
    front,
    result: pass ? 'pass' : 'fail',
    checks,
    toolsCalled: session.toolCalls.map((call) => call.name),
    exchanges: messagesExchanges.length,
    contextTokens: contextTokens ?? null,
    seconds: { session: seconds(runs.session.durationMs), context: seconds(runs.context.durationMs) },
  };
  if (!pass) cell.failure = notes.join('; ').slice(0, 1500);
  return cell;
}

/** Runs both fronts for one upstream, one after the other (a llama.cpp server has one slot). */
async function runUpstream(upstream: Upstream): Promise<CellResult[]> {
  const cells: CellResult[] = [];
  for (const [front, through] of [
    ['tpx serve', throughServe],
    ['tpx claude', throughTpxClaude],
  ] as const) {
    const workspace = createWorkspace();
    try {
      cells.push(judge(upstream, front, await through(upstream, workspace)));
    } finally {
      workspace.remove();
    }
  }
  return cells;
}

let claudeVersion = '';
let claudeBinary = CLAUDE_BIN;
const cells: CellResult[] = [];
const llamaServers: LlamaServer[] = [];
const taps: RecordingTap[] = [];
let mockModel: ChildProcess | undefined;

async function llamaUpstream(model: 'tiny-tools' | 'tiny-tools-strict'): Promise<RecordingTap> {
  const server = await startLlamaServer({
    model,
    contextSize: LLAMA_CONTEXT,
    // The test models were made with an 8192-token training context, which llama.cpp caps the slot to.
    extraArguments: ['--override-kv', `llama.context_length=int:${LLAMA_CONTEXT}`],
  });
  llamaServers.push(server);
  const tap = await startRecordingTap(server.url, { rewriteRequest: askForAToolFirst });
  taps.push(tap);
  return tap;
}

beforeAll(async () => {
  ({ binary: claudeBinary, version: claudeVersion } = await locateClaudeCode());
  const mock = await startTpxMockModel();
  mockModel = mock.child;
  const upstreams: Upstream[] = [
    {
      label: 'tpx mock-model',
      wire: 'chat',
      tpxArgs: ['--base-url', mock.url, '--token', 'local'],
      env: {},
      claudeArgs: [],
      claudeEnv: {},
      timeoutMs: MOCK_RUN_TIMEOUT_MS,
    },
    {
      label: 'tpx mock-model',
      wire: 'responses',
      tpxArgs: ['--base-url', mock.url, '--token', 'local', '--wire', 'responses'],
      env: {},
      claudeArgs: [],
      claudeEnv: {},
      timeoutMs: MOCK_RUN_TIMEOUT_MS,
    },
  ];
  if (hasLlamaServer) {
    const [plain, strict, messages] = await Promise.all([
      llamaUpstream('tiny-tools'),
      llamaUpstream('tiny-tools-strict'),
      llamaUpstream('tiny-tools'),
    ]);
    const chat = (tap: RecordingTap) => [
      '--base-url',
      `${tap.url}/v1`,
      '--token',
      'local',
      '--dialect',
      'llamacpp',
    ];
    const llama = { claudeArgs: SMALL_PROMPT, claudeEnv: NO_TOOL_SEARCH, timeoutMs: LLAMA_RUN_TIMEOUT_MS };
    upstreams.push(
      { label: 'llama.cpp, plain template', wire: 'chat', tpxArgs: chat(plain), env: {}, ...llama },
      { label: 'llama.cpp, strict template', wire: 'chat', tpxArgs: chat(strict), env: {}, ...llama },
      {
        label: 'llama.cpp /v1/messages',
        wire: 'messages',
        tpxArgs: [],
        env: { ANTHROPIC_API_KEY: 'local', ANTHROPIC_BASE_URL: messages.url },
        ...llama,
      },
    );
  }
  const results = await Promise.all(upstreams.map(runUpstream));
  cells.push(...results.flat());
}, ALL_CELLS_TIMEOUT_MS);

afterAll(async () => {
  killLeftovers();
  mockModel?.kill('SIGKILL');
  await Promise.all(taps.map((tap) => tap.close()));
  await Promise.all(llamaServers.map((server) => server.stop()));
});

function cell(upstream: string, wire: string, front: string): CellResult {
  const found = cells.find((c) => c.upstream === upstream && c.wire === wire && c.front === front);
  if (found === undefined) throw new Error(`no cell ${upstream} / ${wire} / ${front}`);
  return found;
}

const MATRIX: [string, CellResult['wire'], boolean][] = [
  ['tpx mock-model', 'chat', false],
  ['tpx mock-model', 'responses', false],
  ['llama.cpp, plain template', 'chat', true],
  ['llama.cpp, strict template', 'chat', true],
  ['llama.cpp /v1/messages', 'messages', true],
];

describe('the real Claude Code CLI against tpx', () => {
  for (const [upstream, wire, needsLlama] of MATRIX) {
    for (const front of ['tpx serve', 'tpx claude'] as const) {
      it.skipIf(needsLlama && !hasLlamaServer)(
        `starts, completes a tool round trip, ends the turn by itself and counts /context: ${upstream}, ${wire} wire, ${front}`,
        () => {
          const result = cell(upstream, wire, front);
          expect(result.failure).toBeUndefined();
          expect(result.checks).toEqual({
            starts: true,
            toolRoundTrip: true,
            endsByItself: true,
            contextCounts: true,
          });
        },
      );
    }
  }

  it.skipIf(!hasLlamaServer)(
    'matches docs/compatibility.json (or rewrites it with TPX_UPDATE_COMPATIBILITY=1)',
    async () => {
      const run: CompatibilityRecord = {
        description:
          'Claude Code against tpx, cell by cell: written by test/compat/claude-code.test.ts; docs/compatibility.md quotes it.',
        claudeCode: claudeVersion,
        checkedOn: new Date().toISOString().slice(0, 10),
        command: UPDATE_COMMAND,
        cells,
      };
      if (UPDATING) {
        await writeRecord(run);
        return;
      }
      const recorded = readRecord();
      expect(recorded, `no docs/compatibility.json: run ${UPDATE_COMMAND}`).toBeDefined();
      expect(
        comparable(run),
        `the results differ from docs/compatibility.json: run ${UPDATE_COMMAND}`,
      ).toEqual(comparable(recorded!));
    },
  );
});
