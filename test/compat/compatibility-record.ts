/**
 * The compatibility results kept in the repository: `docs/compatibility.json` (machine-readable, written
 * by the compatibility test when `TPX_UPDATE_COMPATIBILITY=1`) and the table in `docs/compatibility.md`
 * between two markers, rendered from that file. A normal run checks that its results are the recorded
 * ones; an update run rewrites both.
 *
 * @module
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';

const ROOT = new URL('../../', import.meta.url);
export const RECORD_FILE = new URL('docs/compatibility.json', ROOT);
export const DOC_FILE = new URL('docs/compatibility.md', ROOT);

/** The command that re-runs the matrix and rewrites the record and the table. */
export const UPDATE_COMMAND =
  'npm run build --silent && TPX_UPDATE_COMPATIBILITY=1 npx vitest run test/compat/claude-code.test.ts';

export const TABLE_START = '<!-- compatibility table: written by the compatibility test, do not edit -->';
export const TABLE_END = '<!-- end of compatibility table -->';

/** What each cell checks, each `true` when it held. */
export interface CellChecks {
  /** Claude Code started (its `init` event) and its first request reached the proxy. */
  starts: boolean;
  /** A `tool_use` came back to Claude Code, it ran the tool and sent the `tool_result`, and the model answered. */
  toolRoundTrip: boolean;
  /** The turn ended by itself: a `result` event with `subtype: "success"`, not an error or a limit. */
  endsByItself: boolean;
  /** `claude -p "/context"` reported a token count, and the proxy answered its `count_tokens` requests. */
  contextCounts: boolean;
}

/** One cell: Claude Code against one upstream, on one wire, through one front. */
export interface CellResult {
  upstream: string;
  /** The wire between tpx and the upstream: `chat`, `responses` (tpx provider) or `messages` (anthropic provider). */
  wire: 'chat' | 'responses' | 'messages';
  /** How Claude Code reached tpx: `tpx serve` (Claude Code pointed at it) or `tpx claude` (it starts Claude Code). */
  front: 'tpx serve' | 'tpx claude';
  result: 'pass' | 'fail';
  checks: CellChecks;
  /** The tools Claude Code was asked to run, in order. */
  toolsCalled: string[];
  /** `POST /v1/messages` exchanges the session took. */
  exchanges: number;
  /** What `/context` reported, in tokens. */
  contextTokens: number | null;
  /** How long Claude Code ran, in seconds: the session and `/context`. */
  seconds: { session: number; context: number };
  /** What went wrong, when a check did not hold. */
  failure?: string;
}

export interface CompatibilityRecord {
  description: string;
  /** `claude --version`, e.g. `2.1.332`. */
  claudeCode: string;
  /** The day of the run (YYYY-MM-DD). */
  checkedOn: string;
  command: string;
  cells: CellResult[];
}

export function readRecord(): CompatibilityRecord | undefined {
  try {
    return JSON.parse(readFileSync(RECORD_FILE, 'utf8')) as CompatibilityRecord;
  } catch {
    return undefined;
  }
}

/** The facts a normal run compares with the record: everything but the day, counts and token figures. */
export function comparable(record: Pick<CompatibilityRecord, 'claudeCode' | 'cells'>): unknown {
  return {
    claudeCode: record.claudeCode,
    cells: record.cells.map(({ upstream, wire, front, result, checks }) => ({
      upstream,
      wire,
      front,
      result,
      checks,
    })),
  };
}

function mark(isTrue: boolean): string {
  return isTrue ? 'yes' : '**no**';
}

/** The Markdown table of a record (before formatting). */
export function renderTable(record: CompatibilityRecord): string {
  const header =
    '| Claude Code | upstream | wire | front | result | tool round trip | ends by itself | `/context` counts | tools called | exchanges | checked on |';
  const rule = '|' + ' --- |'.repeat(11);
  const rows = record.cells.map((cell) =>
    [
      '',
      record.claudeCode,
      cell.upstream,
      cell.wire,
      `\`${cell.front}\``,
      cell.result === 'pass' ? 'pass' : `**fail**: ${cell.failure ?? ''}`.replaceAll('|', '\\|'),
      mark(cell.checks.toolRoundTrip),
      mark(cell.checks.endsByItself),
      cell.checks.contextCounts ? `yes (${cell.contextTokens ?? '?'} tokens)` : mark(false),
      cell.toolsCalled.join(', ') || '—',
      String(cell.exchanges),
      record.checkedOn,
      '',
    ]
      .join(' | ')
      .trim(),
  );
  return [header, rule, ...rows].join('\n');
}

async function prettierOptions(file: URL, parser: string) {
  return { ...(await resolveConfig(file)), parser };
}

/** The doc with its table section replaced by `table`, formatted as `npm run lint` wants it. */
export async function withTable(doc: string, table: string): Promise<string> {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start === -1 || end < start) throw new Error('docs/compatibility.md: table markers not found');
  const replaced = `${doc.slice(0, start + TABLE_START.length)}\n\n${table}\n\n${doc.slice(end)}`;
  return format(replaced, await prettierOptions(DOC_FILE, 'markdown'));
}

/** Writes the record and the doc's table. */
export async function writeRecord(record: CompatibilityRecord): Promise<void> {
  const json = await format(JSON.stringify(record), await prettierOptions(RECORD_FILE, 'json'));
  writeFileSync(RECORD_FILE, json);
  const doc = readFileSync(DOC_FILE, 'utf8');
  writeFileSync(DOC_FILE, await withTable(doc, renderTable(record)));
}
