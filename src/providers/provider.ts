/**
 * What every provider implements: one attempt of an exchange, non-streaming or streaming. Retries,
 * deadlines and cancellation are the transport's; a provider only speaks its wire protocol.
 *
 * @module
 */
import type { ProviderName } from '../errors.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import type { CountTokensRequest, ExchangeOptions, TokenCount, UpstreamReport } from './exchange-types.js';
import type { AttemptContext } from './http-exchange.js';

/** Reports the upstream status and the headers worth passing on, once per attempt. */
export type ReportResponse = (status: number, headers: Record<string, string>) => void;

export interface Provider {
  readonly name: ProviderName;
  /** One attempt; rejects with a `TransportError`. */
  send(
    request: MessagesRequest,
    options: ExchangeOptions,
    context: AttemptContext,
    report: ReportResponse,
  ): Promise<Message>;
  /**
   * One attempt, as batches of events in protocol order: the events one chunk of the upstream body
   * produced come in one array (never empty), so the layers above take a chunk's worth in one step. A
   * failure is thrown from the iteration as a `TransportError`, after the batch of events that came
   * before it in the same chunk.
   */
  stream(
    request: MessagesRequest,
    options: ExchangeOptions,
    context: AttemptContext,
    report: ReportResponse,
  ): AsyncGenerator<MessageStreamEvent[]>;
  /** One attempt of `count_tokens`; rejects with a `TransportError`. */
  countTokens?(
    request: CountTokensRequest,
    options: ExchangeOptions,
    context: AttemptContext,
    report: ReportResponse,
  ): Promise<TokenCount>;
  /** One attempt of listing models, answered in the Messages list shape; rejects with a `TransportError`. */
  listModels?(options: ExchangeOptions, context: AttemptContext, report: ReportResponse): Promise<unknown>;
  /**
   * One attempt of asking the upstream what it serves (see `inspect-upstream.ts`). `detectServer`: also
   * ask what kind of server it is, from endpoints beside the OpenAI-compatible ones (an explicit
   * inspection: the doctor, start-up); the inspections exchanges make for themselves never do.
   */
  inspect?(
    options: ExchangeOptions,
    context: AttemptContext,
    report: ReportResponse,
    detail?: { detectServer?: boolean },
  ): Promise<UpstreamReport>;
}
