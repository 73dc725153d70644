/**
 * The filters of `tpx journal`: by status (`200`, `4xx`, `5xx`, `error`), by model (a glob on the
 * requested or the upstream model) and by time (`--since`, `--until`: a date, or a duration back from
 * now such as `30m`, `2h`, `7d`).
 *
 * @module
 */
import type { JournalRecord } from './journal-record.js';

/** What a listing keeps. */
export interface RecordFilter {
  status?: string;
  model?: string;
  sinceMs?: number;
  untilMs?: number;
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A `--since` / `--until` value as ms since the epoch: an ISO date or date-time, or a duration back
 * from `nowMs`. `undefined` for a value that is neither.
 */
export function parseTimeBound(value: string, nowMs: number): number | undefined {
  const duration = DURATION.exec(value.trim());
  if (duration !== null) return nowMs - Number(duration[1]) * UNIT_MS[duration[2]!]!;
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/** Whether `value` is a `--status` this filter understands. */
export function isStatusFilter(value: string): boolean {
  return value === 'error' || value === 'ok' || /^[1-5](\d\d|xx)$/.test(value);
}

function matchesStatus(record: JournalRecord, status: string): boolean {
  const failed = record.status >= 400 || record.error !== undefined || record.errorCode !== undefined;
  if (status === 'error') return failed;
  if (status === 'ok') return !failed;
  if (status.endsWith('xx')) return Math.floor(record.status / 100) === Number(status[0]);
  return record.status === Number(status);
}

/** A glob (`*` any run of characters, `?` one character) as an anchored regular expression. */
export function globPattern(glob: string): RegExp {
  const source = glob
    .split('')
    .map((character) =>
      character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}$`, 'i');
}

/** A predicate for `filter`. */
export function recordFilter(filter: RecordFilter): (record: JournalRecord) => boolean {
  const model = filter.model === undefined ? undefined : globPattern(filter.model);
  return (record) => {
    if (filter.status !== undefined && !matchesStatus(record, filter.status)) return false;
    if (model !== undefined && !model.test(record.model ?? '') && !model.test(record.upstreamModel ?? ''))
      return false;
    if (filter.sinceMs !== undefined || filter.untilMs !== undefined) {
      const time = Date.parse(record.time);
      if (filter.sinceMs !== undefined && time < filter.sinceMs) return false;
      if (filter.untilMs !== undefined && time > filter.untilMs) return false;
    }
    return true;
  };
}
