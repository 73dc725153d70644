/**
 * The Messages exchanges of a transport, `send` and `stream`: the caller's request checked, shaped for
 * the upstream (model mapping, output cap), sent through the attempt loop, and the answer given back
 * under the model the caller asked for.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import { validateMessagesRequest } from '../protocol/validate-messages.js';
import { noneProvider } from '../providers/none.js';
import { checkPairing } from '../translate/check-pairing.js';
import { checkCount } from './resolve-deadlines.js';
import { sendRouted, streamRouted } from './routes/routed-exchanges.js';
import type { ShapedRequest } from './shape-request.js';
import { shapedOptions } from './shaped-options.js';
import type { TransportCore } from './transport-core.js';
import type { ExchangeOptions, MessagesRequestInput } from './types.js';

/** Validates the caller's request and its tool pairing; throws `MODEL_EINVAL` / `MODEL_EPAIRING`. */
function checkRequest(request: unknown): MessagesRequest {
  const validated = validateMessagesRequest(request);
  if (!validated.ok) {
    throw new TransportError('MODEL_EINVAL', `invalid Messages request: ${validated.message}`);
  }
  checkPairing(validated.value.messages);
  return validated.value;
}

/** Checks that an exchange may start: the transport is open, and the call's retry budget is a count. */
function checkExchange(core: TransportCore, exchangeOptions: ExchangeOptions): void {
  core.runner.ensureOpen();
  checkCount(exchangeOptions.maxRetries, 'maxRetries');
}

/** One exchange answered with a message. */
export async function sendMessage(
  core: TransportCore,
  request: MessagesRequestInput,
  exchangeOptions: ExchangeOptions = {},
): Promise<Message> {
  checkExchange(core, exchangeOptions);
  // NoProvider: with no credentials every exchange fails at once, whatever the request says.
  if (core.selected === 'none') {
    const context = core.runner.immediateContext();
    return noneProvider.send(request as MessagesRequest, exchangeOptions, context, () => {});
  }
  const checked = checkRequest(request);
  if (core.router !== undefined) return sendRouted(core.runner, core.router, checked, exchangeOptions);
  // An idle shaper could never change anything: skipping it spares the exchange a turn of the loop.
  const shaped: ShapedRequest = core.shaper.idle ? { request: checked } : await core.shaper.shape(checked);
  const upstreamOptions = shapedOptions(exchangeOptions, shaped);
  const message = await core.runner.run(
    upstreamOptions,
    (context, report) => core.provider.send(shaped.request, upstreamOptions, context, report),
    shaped.request.model,
  );
  // The caller hears of the model it asked for; the log (through onResponse) records both.
  return shaped.upstreamModel === undefined ? message : { ...message, model: checked.model };
}

/** One streaming exchange, as the provider's batches (see `stream-batches.ts`). */
export async function* streamMessageBatches(
  core: TransportCore,
  request: MessagesRequestInput,
  exchangeOptions: ExchangeOptions = {},
): AsyncGenerator<MessageStreamEvent[]> {
  checkExchange(core, exchangeOptions);
  if (core.selected === 'none') {
    const context = core.runner.immediateContext();
    yield* noneProvider.stream(request as MessagesRequest, exchangeOptions, context, () => {});
    return;
  }
  const checked = checkRequest(request);
  if (core.router !== undefined) {
    yield* streamRouted(core.runner, core.router, checked, exchangeOptions);
    return;
  }
  // An idle shaper could never change anything: skipping it spares the exchange a turn of the loop.
  const shaped: ShapedRequest = core.shaper.idle ? { request: checked } : await core.shaper.shape(checked);
  const upstreamOptions = shapedOptions(exchangeOptions, shaped);
  const batches = core.runner.attempts(upstreamOptions, shaped.request.model, (context, report) =>
    core.provider.stream(shaped.request, upstreamOptions, context, report),
  );
  let first = true;
  for await (const batch of batches) {
    // The caller hears of the model it asked for, in message_start.
    if (first && shaped.upstreamModel !== undefined) {
      for (const event of batch) {
        if (event.type === 'message_start') event.message = { ...event.message, model: checked.model };
      }
    }
    first = false;
    yield batch;
  }
}
