/**
 * The proxy's log as the CLI writes it: JSON lines (pino) when stdout is a file or a pipe, for
 * machines; one short human-readable line per record on a terminal, for people:
 *
 * ```text
 * 10:47:01 INFO  POST /v1/messages 200 812ms claude-opus-4-1→qwen3-32b in=1204 out=88
 * 10:47:09 WARN  POST /v1/messages 502 3ms MODEL_ETRANSPORT nothing is listening at 127.0.0.1:8000 …
 * ```
 *
 * @module
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { bufferedDestination } from '../server/logger.js';
import type { LogLevel } from './proxy-settings.js';

const LEVEL_NAMES: Readonly<Record<number, string>> = {
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** The fields of an exchange line worth a person's attention, in reading order. */
function describeExchange(record: Record<string, unknown>): string {
  const parts = [String(record['method']), String(record['path']), String(record['status'])];
  if (typeof record['durationMs'] === 'number') parts.push(`${Math.round(record['durationMs'])}ms`);
  if (typeof record['model'] === 'string') {
    const upstream = typeof record['upstreamModel'] === 'string' ? `→${record['upstreamModel']}` : '';
    parts.push(`${record['model']}${upstream}`);
  }
  if (typeof record['upstreamMaxTokens'] === 'number')
    parts.push(`max_tokens→${record['upstreamMaxTokens']}`);
  const usage = record['usage'] as { input_tokens?: number; output_tokens?: number } | undefined;
  if (usage?.input_tokens !== undefined) parts.push(`in=${usage.input_tokens}`);
  if (usage?.output_tokens !== undefined) parts.push(`out=${usage.output_tokens}`);
  if (typeof record['error'] === 'string') parts.push(record['error']);
  if (typeof record['errorMessage'] === 'string') parts.push(record['errorMessage']);
  return parts.join(' ');
}

/** One JSON log line as a line for a person. Lines that are not JSON pass through. */
export function formatLogLine(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = new Date(typeof record['time'] === 'number' ? record['time'] : Date.now())
    .toTimeString()
    .slice(0, 8);
  const level = (LEVEL_NAMES[Number(record['level'])] ?? 'INFO').padEnd(5);
  const message =
    record['msg'] === 'exchange'
      ? describeExchange(record)
      : typeof record['msg'] === 'string'
        ? record['msg']
        : '';
  const extra = ['url', 'upstream', 'reason']
    .filter((key) => typeof record[key] === 'string' && record['msg'] !== 'exchange')
    .map((key) => `${key}=${String(record[key])}`);
  return `${time} ${level} ${[message, ...extra].join(' ')}`;
}

/** A stream that writes each JSON line it is given to `write`, formatted for a person. */
function humanStream(write: (text: string) => void): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      pending += chunk.toString('utf8');
      let newline = pending.indexOf('\n');
      while (newline !== -1) {
        write(`${formatLogLine(pending.slice(0, newline))}\n`);
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
      callback();
    },
  });
}

/**
 * The CLI's logger at `level` (default `info`): human-readable lines on a terminal, buffered JSON lines
 * otherwise, on stdout.
 */
export function createCliLogger(level: LogLevel | undefined, isTerminal: boolean): Logger {
  const options = { name: 'tpx-serve', level: level ?? 'info' };
  if (isTerminal)
    return pino(
      options,
      humanStream((text) => process.stdout.write(text)),
    );
  return pino(options, bufferedDestination());
}
