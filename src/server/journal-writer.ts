/**
 * `tpx serve --journal DIR`: appends one JSON line per finished exchange (`journal/journal-record.ts`) to
 * `DIR/tpx-<start time>-<pid>-<n>.jsonl`, off the exchange's path.
 *
 * - An exchange only queues what it already holds (strings and its log record); the lines are built
 *   (bodies parsed, media hashed, JSON written) in batches on a later turn of the event loop, after the
 *   answer went out, and appended with one `write` per batch (`fs.promises`).
 * - Rotation by size: a file that would pass `maxFileBytes` is closed and the next one opened; only the
 *   newest `maxFiles` journal files of the directory are kept. Each process writes files of its own (the
 *   pid is in the name), so `--workers` never interleave lines.
 * - A directory that cannot be created or written, or a full disk, is logged once (as a warning) and the
 *   lines are dropped: the journal never fails, or slows, an exchange. So is a queue that grows past
 *   `maxPendingExchanges` (a disk slower than the traffic).
 *
 * @module
 */
import { mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ExchangeRecorder, FinishedExchange } from './exchange-recorder.js';
import { journalRecord } from './journal-line.js';
import type { JournalMedia } from '../journal/redact-media.js';

/** Options of {@link JournalWriter}. */
export interface JournalOptions {
  /** The directory the journal files go to; created when missing. */
  dir: string;
  /** `hash`: image and document data as hash and size; `keep`: as sent. @default 'hash' */
  media?: JournalMedia;
  /** A file is rotated before it passes this size, in bytes. @default 64 MiB */
  maxFileBytes?: number;
  /** How many journal files the directory keeps (the oldest are deleted at rotation). @default 20 */
  maxFiles?: number;
  /** Exchanges waiting to be written beyond which new ones are dropped. @default 10_000 */
  maxPendingExchanges?: number;
  /** Where the one warning about a journal that cannot be written goes. */
  logger: Logger;
}

const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_FILES = 20;
const DEFAULT_MAX_PENDING = 10_000;
/** Exchanges turned into lines per write. */
const BATCH_SIZE = 256;
/** The journal files this writer (and its peers in other processes) writes, oldest first by name. */
export const JOURNAL_FILE = /^tpx-\d{8}T\d{9}Z-\d+-\d+\.jsonl$/;

/** `20260501T093000123Z`: a time that sorts as text. */
function fileStamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace('.', '');
}

/** Writes the journal; see the module comment. */
export class JournalWriter implements ExchangeRecorder {
  readonly needsBodies = true;
  readonly #options: Required<Omit<JournalOptions, 'logger'>> & { logger: Logger };
  readonly #pending: FinishedExchange[] = [];
  #flushing: Promise<void> | undefined;
  #file: { handle: FileHandle; bytes: number } | undefined;
  #fileCount = 0;
  #hasWarned = false;
  #hasWarnedOfDrops = false;
  #isClosed = false;

  constructor(options: JournalOptions) {
    this.#options = {
      media: 'hash',
      maxFileBytes: DEFAULT_MAX_FILE_BYTES,
      maxFiles: DEFAULT_MAX_FILES,
      maxPendingExchanges: DEFAULT_MAX_PENDING,
      ...options,
    };
  }

  record(exchange: FinishedExchange): void {
    if (this.#isClosed) return;
    if (this.#pending.length >= this.#options.maxPendingExchanges) {
      if (!this.#hasWarnedOfDrops) {
        this.#hasWarnedOfDrops = true;
        this.#options.logger.warn(
          { dir: this.#options.dir, pending: this.#pending.length },
          'journal: exchanges arrive faster than they can be written; dropping some',
        );
      }
      return;
    }
    this.#pending.push(exchange);
    this.#flushing ??= this.#flushSoon();
  }

  /** Writes what is queued, on a later turn of the event loop, until the queue is empty. */
  async #flushSoon(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending.splice(0, BATCH_SIZE);
        let text = '';
        for (const exchange of batch) {
          try {
            text += `${JSON.stringify(journalRecord(exchange, this.#options.media))}\n`;
          } catch (error) {
            this.#warnOnce(error);
          }
        }
        if (text !== '') await this.#append(text);
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  async #append(text: string): Promise<void> {
    try {
      const bytes = Buffer.byteLength(text);
      if (
        this.#file !== undefined &&
        this.#file.bytes > 0 &&
        this.#file.bytes + bytes > this.#options.maxFileBytes
      ) {
        await this.#rotate();
      }
      this.#file ??= await this.#openNext();
      await this.#file.handle.write(text);
      this.#file.bytes += bytes;
    } catch (error) {
      this.#warnOnce(error);
      // The next batch tries afresh (the disk may have room again, the directory may exist again).
      const file = this.#file;
      this.#file = undefined;
      await file?.handle.close().catch(() => undefined);
    }
  }

  async #openNext(): Promise<{ handle: FileHandle; bytes: number }> {
    await mkdir(this.#options.dir, { recursive: true });
    this.#fileCount += 1;
    const name = `tpx-${fileStamp(new Date())}-${process.pid}-${this.#fileCount}.jsonl`;
    const handle = await open(join(this.#options.dir, name), 'a');
    return { handle, bytes: 0 };
  }

  async #rotate(): Promise<void> {
    const file = this.#file;
    this.#file = undefined;
    await file?.handle.close();
    const names = (await readdir(this.#options.dir)).filter((name) => JOURNAL_FILE.test(name)).sort();
    // The file about to be opened counts too.
    const excess = names.length + 1 - this.#options.maxFiles;
    for (const name of names.slice(0, Math.max(0, excess))) {
      await unlink(join(this.#options.dir, name)).catch(() => undefined);
    }
  }

  #warnOnce(error: unknown): void {
    if (this.#hasWarned) return;
    this.#hasWarned = true;
    const reason =
      (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
    this.#options.logger.warn(
      { dir: this.#options.dir, reason },
      `journal: cannot write to ${this.#options.dir} (${reason}); exchanges go on without being journaled`,
    );
  }

  /** Writes what is still queued and closes the file. */
  async close(): Promise<void> {
    this.#isClosed = true;
    while (this.#flushing !== undefined) await this.#flushing;
    if (this.#pending.length > 0) {
      this.#flushing = this.#flushSoon();
      await this.#flushing;
    }
    const file = this.#file;
    this.#file = undefined;
    await file?.handle.close().catch(() => undefined);
  }
}
