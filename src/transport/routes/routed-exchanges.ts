/**
 * `send` and `stream` of a transport with routes: the route chosen from the caller's request, each
 * attempt sent to the target the cursor names (shaped for that target: its model, its output cap), the
 * answer given back under the model the caller asked for, and `onResponse` told which upstream and
 * model answered.
 *
 * @module
 */
import type { Message, MessagesRequest, MessageStreamEvent } from '../../protocol/messages.js';
import type { AttemptContext } from '../../providers/http-exchange.js';
import type { ExchangeRunner } from '../exchange-runner.js';
import type { ShapedRequest } from '../shape-request.js';
import type { ExchangeOptions } from '../types.js';
import type { RoutedTarget, Router } from './create-router.js';
import { RouteCursor } from './route-cursor.js';
import { markEvents, markMessage, requestFor } from './signature-origin.js';

/** What one attempt sends: the target and the request shaped for it. */
interface Sending {
  target: RoutedTarget;
  shaped: ShapedRequest;
}

/**
 * The options of the upstream calls: without the caller's body bytes (the request sent is the shaped
 * one), with an `onResponse` that names the upstream and model of the attempt that answered.
 */
function routedOptions(exchangeOptions: ExchangeOptions, latest: () => Sending | undefined): ExchangeOptions {
  const { rawBody: _caller, onResponse, ...rest } = exchangeOptions;
  const options: ExchangeOptions = rest;
  if (onResponse !== undefined) {
    options.onResponse = (info) => {
      const sending = latest();
      if (sending === undefined) return onResponse(info);
      const described = { ...info, upstream: sending.target.upstream.name };
      described.upstreamModel = sending.shaped.request.model;
      if (sending.shaped.upstreamMaxTokens !== undefined) {
        described.upstreamMaxTokens = sending.shaped.upstreamMaxTokens;
      }
      onResponse(described);
    };
  }
  return options;
}

/** The state of one routed exchange: its cursor and what its latest attempt sent. */
class RoutedExchange {
  readonly cursor: RouteCursor;
  readonly options: ExchangeOptions;
  #latest: Sending | undefined;

  constructor(targets: readonly RoutedTarget[], exchangeOptions: ExchangeOptions) {
    this.cursor = new RouteCursor(targets);
    this.options = routedOptions(exchangeOptions, () => this.#latest);
  }

  /** Starts an attempt: its target, and the request shaped for it. */
  async begin(request: MessagesRequest, context: AttemptContext): Promise<Sending> {
    const target = this.cursor.begin(context.notes);
    try {
      // Reasoning another upstream made is not sent here: it would be refused (`signature-origin.ts`).
      const shaped = await target.shaper.shape(requestFor(request, target.upstream.name));
      this.#latest = { target, shaped };
      return this.#latest;
    } catch (error) {
      // Shaping failed (the target does not serve the model): a verdict on the request, not the upstream.
      this.cursor.settle(error);
      throw error;
    }
  }
}

/** One routed exchange answered with a message. */
export async function sendRouted(
  runner: ExchangeRunner,
  router: Router,
  request: MessagesRequest,
  exchangeOptions: ExchangeOptions,
): Promise<Message> {
  const { targets } = await router.plan(request);
  const exchange = new RoutedExchange(targets, exchangeOptions);
  const message = await runner.run(
    exchange.options,
    async (context, report) => {
      const { target, shaped } = await exchange.begin(request, context);
      try {
        const answer = await target.upstream.provider.send(shaped.request, exchange.options, context, report);
        exchange.cursor.settle();
        return markMessage(answer, target.upstream.name);
      } catch (error) {
        exchange.cursor.settle(error);
        throw error;
      }
    },
    request.model,
    exchange.cursor,
  );
  // The caller hears of the model it asked for; onResponse names the one that ran.
  return { ...message, model: request.model };
}

/** One attempt of a routed stream: its breaker's verdict comes with its first batch, or its failure. */
async function* streamAttempt(
  exchange: RoutedExchange,
  request: MessagesRequest,
  context: AttemptContext,
  report: (status: number, headers: Record<string, string>) => void,
): AsyncGenerator<MessageStreamEvent[]> {
  const { target, shaped } = await exchange.begin(request, context);
  try {
    for await (const batch of target.upstream.provider.stream(
      shaped.request,
      exchange.options,
      context,
      report,
    )) {
      exchange.cursor.settle();
      markEvents(batch, target.upstream.name);
      yield batch;
    }
  } catch (error) {
    exchange.cursor.settle(error);
    throw error;
  } finally {
    // Left early by its consumer: no verdict, but a probe slot to give back.
    exchange.cursor.settle(new Error('closed'));
  }
}

/** One routed streaming exchange, as the provider's batches. */
export async function* streamRouted(
  runner: ExchangeRunner,
  router: Router,
  request: MessagesRequest,
  exchangeOptions: ExchangeOptions,
): AsyncGenerator<MessageStreamEvent[]> {
  const { targets } = await router.plan(request);
  const exchange = new RoutedExchange(targets, exchangeOptions);
  const batches = runner.attempts(
    exchange.options,
    request.model,
    (context, report) => streamAttempt(exchange, request, context, report),
    exchange.cursor,
  );
  let first = true;
  for await (const batch of batches) {
    // The caller hears of the model it asked for, in message_start.
    if (first) {
      for (const event of batch) {
        if (event.type === 'message_start') event.message = { ...event.message, model: request.model };
      }
    }
    first = false;
    yield batch;
  }
}
