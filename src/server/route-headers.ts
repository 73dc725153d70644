/**
 * What ran, on every answer of a proxy with routes (`tpx serve --config`): `x-tpx-upstream` names the
 * upstream that answered (the last one tried, when every attempt failed) and `x-tpx-model` the model
 * sent to it.
 *
 * @module
 */
import type { ResponseInfo } from '../transport/types.js';

/** The header naming the upstream that answered. */
export const UPSTREAM_HEADER = 'x-tpx-upstream';
/** The header naming the model sent upstream. */
export const MODEL_HEADER = 'x-tpx-model';

/** Adds the route headers to `headers` when the exchange went through routes. */
export function addRouteHeaders(info: ResponseInfo | undefined, headers: Record<string, string>): void {
  if (info?.upstream === undefined) return;
  headers[UPSTREAM_HEADER] = info.upstream;
  if (info.upstreamModel !== undefined) headers[MODEL_HEADER] = info.upstreamModel;
}
