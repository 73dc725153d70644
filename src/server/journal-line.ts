/**
 * Builds the journal line (`journal/journal-record.ts`) of one finished exchange: its bodies parsed and,
 * unless media is kept, its image and document data reduced to hash and size.
 *
 * @module
 */
import type { JournalRecord } from '../journal/journal-record.js';
import { redactMedia, type JournalMedia } from '../journal/redact-media.js';
import { exchangeHeadline, type FinishedExchange } from './exchange-recorder.js';

/** JSON text as a value (text that is not JSON is kept as the text itself). */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The journal line of one finished exchange (its bodies parsed and, with `media: 'hash'`, reduced). */
export function journalRecord(exchange: FinishedExchange, media: JournalMedia): JournalRecord {
  const { record } = exchange;
  const body = (text: string) => (media === 'keep' ? parsed(text) : redactMedia(parsed(text)));
  const line: JournalRecord = { ...exchangeHeadline(exchange), provider: record.provider };
  if (record.attempts !== undefined) line.attempts = record.attempts;
  if (record.retries !== undefined) line.retries = record.retries;
  if (record.clientClosed === true) line.clientClosed = true;
  if (exchange.requestText !== undefined) line.request = body(exchange.requestText);
  if (exchange.upstreamBodies !== undefined) {
    line.upstreamRequests = exchange.upstreamBodies.map(({ attempt, body: text }) => ({
      attempt,
      body: body(text),
    }));
  }
  if (exchange.responseText !== undefined) line.response = body(exchange.responseText);
  if (exchange.errorText !== undefined) line.error = parsed(exchange.errorText);
  if (record.error !== undefined) line.errorCode = record.error;
  return line;
}
