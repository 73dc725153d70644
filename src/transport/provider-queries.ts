/**
 * The exchanges of a transport that are not a message: count_tokens, the model list, and the upstream's
 * inspection — each one attempt of the provider's own, in the attempt loop, for providers that have it.
 *
 * @module
 */
import { TransportError } from '../errors.js';
import { validateMessagesRequest } from '../protocol/validate-messages.js';
import type { TransportCore } from './transport-core.js';
import type { CountTokensRequest, ExchangeOptions, TokenCount, UpstreamReport } from './types.js';

/** `MODEL_EINVAL` (404) for what the provider cannot do. */
function unsupported(core: TransportCore, what: string): TransportError {
  return new TransportError('MODEL_EINVAL', `the ${core.provider.name} provider cannot ${what}`, {
    status: 404,
    type: 'not_found_error',
  });
}

/** Counts a request's input tokens. */
export async function countTokens(
  core: TransportCore,
  request: CountTokensRequest,
  exchangeOptions: ExchangeOptions = {},
): Promise<TokenCount> {
  core.runner.ensureOpen();
  // NoProvider: with no credentials the answer is the 401, whatever the request says. Otherwise the
  // Messages validator checks it, with a max_tokens added since count_tokens requests carry none.
  const validated =
    core.selected === 'none' ? undefined : validateMessagesRequest({ ...request, max_tokens: 1 });
  if (validated?.ok === false)
    throw new TransportError('MODEL_EINVAL', `invalid count_tokens request: ${validated.message}`);
  const count = core.provider.countTokens?.bind(core.provider);
  if (count === undefined) throw unsupported(core, 'count tokens');
  return core.runner.run(
    exchangeOptions,
    (context, report) => count(request, exchangeOptions, context, report),
    request.model,
  );
}

/** Lists the models, in the Messages list shape. */
export async function listModels(
  core: TransportCore,
  exchangeOptions: ExchangeOptions = {},
): Promise<unknown> {
  core.runner.ensureOpen();
  const list = core.provider.listModels?.bind(core.provider);
  if (list === undefined) throw unsupported(core, 'list models');
  return core.runner.run(exchangeOptions, (context, report) => list(exchangeOptions, context, report));
}

/** Asks the upstream what it serves; the report is kept for the exchanges that need it. */
export async function inspectUpstream(
  core: TransportCore,
  exchangeOptions: ExchangeOptions = {},
): Promise<UpstreamReport> {
  core.runner.ensureOpen();
  const inspect = core.provider.inspect?.bind(core.provider);
  // Only the none provider has no inspection: it has no upstream.
  if (inspect === undefined) {
    throw new TransportError('MODEL_EAUTH', `the ${core.provider.name} provider has no upstream to inspect`, {
      status: 401,
      type: 'authentication_error',
    });
  }
  const report = await core.runner.run(exchangeOptions, (context, reportResponse) =>
    inspect(exchangeOptions, context, reportResponse, { detectServer: true }),
  );
  core.catalog?.remember(report);
  return report;
}
