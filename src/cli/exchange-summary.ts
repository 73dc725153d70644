/**
 * What `tpx claude` shows on its stderr while Claude Code runs: one line per exchange (the model asked
 * for and the one that answered, tokens, time, status), the whole explanation of any exchange that
 * failed, and the proxy's warnings. Claude Code shows only its own short words for an API error ("There's
 * an issue with the selected model", "Prompt is too long"); the line under it says why.
 *
 * A pino destination: it reads the proxy's JSON log lines, so it shows exactly what the log records.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';

/** pino's numeric levels. */
const INFO = 30;
const WARN = 40;

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/** The tokens part: `14235 in, 120 out` (cache reads added when there were any). */
function describeUsage(usage: unknown): string | undefined {
  if (!isObject(usage)) return undefined;
  const input = count(usage['input_tokens']);
  const output = count(usage['output_tokens']);
  const cached = count(usage['cache_read_input_tokens']);
  const parts: string[] = [];
  if (input !== undefined)
    parts.push(`${input} in${cached !== undefined && cached > 0 ? ` (${cached} cached)` : ''}`);
  if (output !== undefined) parts.push(`${output} out`);
  return parts.length === 0 ? undefined : parts.join(', ');
}

/**
 * What to do about a first-byte deadline passed on a retry: most often the request waited behind another
 * in a server with one slot, since Claude Code sends sub-agent and background requests alongside.
 */
export const ONE_SLOT_HINT =
  '  (a server with one slot, such as llama.cpp with -np 1, keeps a request waiting while it answers ' +
  'another, and Claude Code sends sub-agent and background requests alongside: start the server with ' +
  '-np 2 or more (and -c that many times the context), or give tpx a longer --first-byte-timeout)';

/** One line per retry, with why; the one-slot hint after a first-byte deadline. */
function describeRetries(record: Record<string, unknown>): string[] {
  const retries = record['retries'];
  if (!Array.isArray(retries)) return [];
  const lines: string[] = [];
  let isFirstByte = false;
  for (const retry of retries.filter(isObject)) {
    const what = [text(retry['error']), count(retry['status']), text(retry['deadline'])]
      .filter((part) => part !== undefined)
      .join(' ');
    const deadline = text(retry['deadline']);
    if (deadline === 'first-byte') isFirstByte = true;
    lines.push(
      `  attempt ${count(retry['attempt']) ?? '?'} failed (${what}), retried: ${text(retry['reason']) ?? ''}`,
    );
  }
  if (isFirstByte) lines.push(ONE_SLOT_HINT);
  return lines;
}

/**
 * The lines for one exchange record, e.g.
 * `tpx: POST /v1/messages claude-sonnet-5-5 → qwen3-4b · 14235 in, 120 out · 812 ms · 200`.
 */
export function summariseExchange(record: Record<string, unknown>): string[] {
  const model = text(record['model']);
  const upstreamModel = text(record['upstreamModel']);
  const parts = [`${text(record['method']) ?? '?'} ${text(record['path']) ?? '?'}`];
  if (model !== undefined) parts[0] += ` ${model}${upstreamModel === undefined ? '' : ` → ${upstreamModel}`}`;
  const usage = describeUsage(record['usage']);
  if (usage !== undefined) parts.push(usage);
  const durationMs = count(record['durationMs']);
  if (durationMs !== undefined) parts.push(`${Math.round(durationMs)} ms`);
  const attempts = count(record['attempts']);
  if (attempts !== undefined && attempts > 1) parts.push(`${attempts} attempts`);
  const status = count(record['status']);
  const code = text(record['error']);
  parts.push(
    `${status ?? '?'}${code === undefined ? '' : ` ${code}`}${record['clientClosed'] === true ? ' (client closed)' : ''}`,
  );
  const lines = [`tpx: ${parts.join(' · ')}`, ...describeRetries(record)];
  const message = text(record['errorMessage']);
  if (message !== undefined) lines.push(`  ${message}`);
  return lines;
}

/**
 * A pino destination writing the summary of each exchange line (`info` and above) and each warning to
 * `write`; other lines (debug, the probes clients send) are left out.
 */
export function exchangeSummaryStream(write: (line: string) => void): { write(line: string): void } {
  return {
    write(line: string) {
      let record: unknown;
      try {
        record = JSON.parse(line) as unknown;
      } catch {
        return;
      }
      if (!isObject(record)) return;
      const level = count(record['level']) ?? 0;
      if (record['msg'] === 'exchange' && level >= INFO) {
        write(`${summariseExchange(record).join('\n')}\n`);
      } else if (level >= WARN) {
        write(`tpx: warning: ${text(record['msg']) ?? ''}\n`);
      }
    },
  };
}
