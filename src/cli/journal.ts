/**
 * `tpx journal DIR`: lists the exchanges of a journal written by `tpx serve --journal DIR`, one line
 * each, filtered by status, model and time; `--show ID` prints one exchange whole. A damaged line is
 * reported (file and line number) on stderr and skipped.
 *
 * @module
 */
import { relative } from 'node:path';
import {
  isStatusFilter,
  parseTimeBound,
  recordFilter,
  type RecordFilter,
} from '../journal/filter-records.js';
import type { JournalRecord } from '../journal/journal-record.js';
import { readJournal } from '../journal/read-journal.js';
import { parse } from './parse-flags.js';
import { EXIT_EXCHANGE_ERROR, EXIT_OK, UsageError, type CliIo } from './output.js';

export const JOURNAL_COMMAND_HELP = `Usage: tpx journal <dir|file> [--status 200|4xx|5xx|error|ok] [--model glob] [--since t] [--until t]
       tpx journal <dir|file> --show <id>

Lists the exchanges a journal holds (tpx serve --journal DIR), oldest first, one line each:
time (UTC), status, upstream, model (→ the model sent upstream when it differs), tokens in/out, ms, id.

Options:
  --status <s>     200 (any exact status), 4xx, 5xx, error (4xx, 5xx, or a stream that failed), ok
  --model <glob>   the requested or the upstream model matches, e.g. 'claude-*' or '*qwen*'
  --since <t>      at or after t: a date (2026-05-01, 2026-05-01T09:30:00Z) or a duration ago (30m, 2h, 7d)
  --until <t>      at or before t, as --since
  --show <id>      print that exchange's whole record (request, bodies sent upstream, answer) as JSON
  --json           print the matching records as JSON lines instead of a table

A damaged line is reported on stderr with its file and line number, and skipped.
`;

/** The tokens column: input → output. */
function tokens(record: JournalRecord): string {
  const usage = record.usage;
  if (usage === undefined) return '-';
  return `${usage.input_tokens ?? '-'}→${usage.output_tokens ?? '-'}`;
}

function modelColumn(record: JournalRecord): string {
  const model = record.model ?? '-';
  return record.upstreamModel !== undefined && record.upstreamModel !== record.model
    ? `${model}→${record.upstreamModel}`
    : model;
}

function statusColumn(record: JournalRecord): string {
  // A stream that failed after its 200 went out.
  return record.status < 400 && record.errorCode !== undefined
    ? `${record.status}!${record.errorCode}`
    : String(record.status);
}

/** One listing row's columns. */
function row(record: JournalRecord): string[] {
  return [
    record.time.replace('T', ' ').replace('Z', ''),
    statusColumn(record),
    record.upstream,
    modelColumn(record),
    tokens(record),
    String(Math.round(record.durationMs)),
    record.id,
  ];
}

/** Rows as aligned columns (the last one left unpadded). */
function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((cells) => cells[column]!.length)));
  return rows
    .map((cells) =>
      cells
        .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
        .join('  '),
    )
    .join('\n');
}

function timeBound(value: unknown, flag: string): number | undefined {
  if (typeof value !== 'string') return undefined;
  const bound = parseTimeBound(value, Date.now());
  if (bound === undefined) {
    throw new UsageError(
      `--${flag} must be a date (2026-05-01T09:30:00Z) or a duration ago (30m, 2h, 7d), got ${value}`,
    );
  }
  return bound;
}

/** The filter the flags ask for. */
function filterOf(values: Record<string, unknown>): RecordFilter {
  const filter: RecordFilter = {};
  const status = values['status'];
  if (typeof status === 'string') {
    if (!isStatusFilter(status))
      throw new UsageError(`--status must be 200 (a status), 4xx, 5xx, error or ok, got ${status}`);
    filter.status = status;
  }
  if (typeof values['model'] === 'string') filter.model = values['model'];
  const since = timeBound(values['since'], 'since');
  if (since !== undefined) filter.sinceMs = since;
  const until = timeBound(values['until'], 'until');
  if (until !== undefined) filter.untilMs = until;
  return filter;
}

/** Runs `tpx journal`. */
export async function runJournal(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(
    args,
    {
      status: { type: 'string' },
      model: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      show: { type: 'string' },
      json: { type: 'boolean' },
    },
    true,
  );
  if (values['help'] === true) {
    io.stdout(JOURNAL_COMMAND_HELP);
    return EXIT_OK;
  }
  if (positionals.length !== 1) throw new UsageError('tpx journal takes one journal directory or file');
  const path = positionals[0]!;
  const matches = recordFilter(filterOf(values));
  const show = typeof values['show'] === 'string' ? values['show'] : undefined;
  const rows: string[][] = [['time', 'status', 'upstream', 'model', 'tokens', 'ms', 'id']];
  let damaged = 0;
  try {
    for await (const entry of readJournal(path)) {
      if (entry.kind === 'damaged') {
        damaged += 1;
        io.stderr(
          `tpx journal: ${relative(process.cwd(), entry.file) || entry.file}:${entry.line}: damaged line skipped (${entry.reason})\n`,
        );
        continue;
      }
      const { record } = entry;
      if (show !== undefined) {
        if (record.id !== show) continue;
        io.stdout(`${JSON.stringify(record, null, 2)}\n`);
        return EXIT_OK;
      }
      if (!matches(record)) continue;
      if (values['json'] === true) io.stdout(`${JSON.stringify(record)}\n`);
      else rows.push(row(record));
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR') {
      throw new UsageError(`cannot read the journal ${path}: ${code}`);
    }
    throw error;
  }
  if (show !== undefined) {
    io.stderr(
      `tpx journal: no exchange ${show} in ${path}${damaged > 0 ? ` (${damaged} damaged lines skipped)` : ''}\n`,
    );
    return EXIT_EXCHANGE_ERROR;
  }
  if (values['json'] !== true) io.stdout(`${formatTable(rows)}\n`);
  const count = rows.length - 1;
  io.stderr(
    `${count} exchange${count === 1 ? '' : 's'}${damaged > 0 ? `, ${damaged} damaged lines skipped` : ''}\n`,
  );
  return EXIT_OK;
}
