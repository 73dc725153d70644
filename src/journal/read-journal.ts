/**
 * Reads a journal back: a journal file, or a directory of them (`*.jsonl`, oldest first by name), one
 * line at a time, so that a long journal is never held in memory whole. A line that is not a journal
 * record (cut short by a crash, edited by hand) is reported with its file and line number, and the
 * reading goes on.
 *
 * @module
 */
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isObject } from '../protocol/is-object.js';
import type { JournalRecord } from './journal-record.js';

/** One line of a journal, read. */
export type JournalEntry =
  | { kind: 'record'; record: JournalRecord; file: string; line: number }
  | { kind: 'damaged'; file: string; line: number; reason: string };

/** The journal files at `path`: the file itself, or a directory's `*.jsonl` files in name order. */
export async function journalFiles(path: string): Promise<string[]> {
  const info = await stat(path);
  if (!info.isDirectory()) return [path];
  const names = (await readdir(path)).filter((name) => name.endsWith('.jsonl')).sort();
  return names.map((name) => join(path, name));
}

/** Why `value` is not a journal record, or `undefined` when it is one. */
function problemOf(value: unknown): string | undefined {
  if (!isObject(value)) return 'not a JSON object';
  if (typeof value['id'] !== 'string') return 'no "id"';
  if (typeof value['time'] !== 'string' || Number.isNaN(Date.parse(value['time']))) return 'no valid "time"';
  if (typeof value['status'] !== 'number') return 'no numeric "status"';
  return undefined;
}

/** One journal line read, as an entry (`undefined` for a blank line). */
export function readJournalLine(text: string, file: string, line: number): JournalEntry | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'damaged', file, line, reason: `not JSON (${(error as Error).message})` };
  }
  const problem = problemOf(value);
  if (problem !== undefined) return { kind: 'damaged', file, line, reason: problem };
  return { kind: 'record', record: value as JournalRecord, file, line };
}

/** Every entry of the journal at `path` (a file or a directory), in order. */
export async function* readJournal(path: string): AsyncGenerator<JournalEntry> {
  for (const file of await journalFiles(path)) {
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    let number = 0;
    for await (const text of lines) {
      number += 1;
      const entry = readJournalLine(text, file, number);
      if (entry !== undefined) yield entry;
    }
  }
}
