/**
 * `tpx doctor --config FILE`: every upstream of the routes file checked on its own — its model list, then
 * one tiny chat request with a model the routes send it — and each one that fails named, with the key to
 * fix. Exit 0 only when every upstream passed.
 *
 * @module
 */
import { TransportError, isTransportError } from '../errors.js';
import { createTransport } from '../transport/create-transport.js';
import type { RoutesConfig } from '../transport/routes/routes-config.js';
import type { ModelTransport, TransportOptions, UpstreamInspection } from '../transport/types.js';
import { EXIT_EXCHANGE_ERROR, EXIT_OK, type CliIo } from './output.js';
import { describeReport } from './startup-report.js';

const CHECK_TIMEOUT_MS = 10_000;
const CHAT_TIMEOUT_MS = 60_000;

function describe(error: unknown): string {
  return isTransportError(error) ? `${error.code}: ${error.message}` : String(error);
}

/** The model for an upstream's chat check: one a route names for it, else the first it lists, else `fallback`. */
function modelFor(
  name: string,
  routes: RoutesConfig,
  inspection: UpstreamInspection,
  fallback: string,
): string {
  for (const route of routes.routes) {
    for (const target of [route.to, ...(route.fallback ?? [])]) {
      const colon = target.indexOf(':');
      if (colon !== -1 && target.slice(0, colon).trim() === name) return target.slice(colon + 1).trim();
    }
  }
  if ('report' in inspection && inspection.report.models?.[0] !== undefined) {
    return inspection.report.models[0].id;
  }
  return fallback;
}

/** One tiny chat request to upstream `name` alone (a transport with only it); the problem, if any. */
async function checkChat(
  name: string,
  model: string,
  options: TransportOptions,
  routes: RoutesConfig,
  io: CliIo,
): Promise<string | undefined> {
  const upstream = routes.upstreams[name]!;
  const single = createTransport({
    ...options,
    routes: { upstreams: { [name]: upstream }, routes: [{ to: `${name}:${model}` }] },
  });
  try {
    const message = await single.send(
      { model, max_tokens: 16, messages: [{ role: 'user', content: 'Reply with the word ok.' }] },
      { timeoutMs: CHAT_TIMEOUT_MS, maxRetries: 0 },
    );
    io.stdout(
      `  chat (model ${model}): answered, stop_reason ${String(message.stop_reason)}, ${message.usage.output_tokens} output tokens\n`,
    );
    return undefined;
  } catch (error) {
    return `chat (model ${model}) failed: ${describe(error)}`;
  } finally {
    await single.close();
  }
}

/**
 * Checks every upstream of `transport`'s routes; prints what each serves and answers, and names each one
 * that failed.
 */
export async function checkRoutedUpstreams(
  transport: ModelTransport,
  options: TransportOptions,
  requestedModel: string,
  io: CliIo,
): Promise<number> {
  const routes = options.routes;
  const source = transport.selection.routes?.source ?? 'the routes file';
  if (routes === undefined || transport.inspectUpstreams === undefined) {
    throw new TransportError('MODEL_ECONFIG', 'no routes to check');
  }
  const failed: string[] = [];
  for (const inspection of await transport.inspectUpstreams({ timeoutMs: CHECK_TIMEOUT_MS, maxRetries: 0 })) {
    const { name } = inspection;
    io.stdout(`upstream ${name} (${inspection.baseUrl}):\n`);
    let problem: string | undefined;
    if ('report' in inspection) {
      io.stdout(
        `${describeReport(inspection.report)
          .map((line) => `  ${line}`)
          .join('\n')}\n`,
      );
      const model = modelFor(name, routes, inspection, requestedModel);
      problem = await checkChat(name, model, { ...options, env: {} }, routes, io);
    } else {
      problem = `model list failed: ${describe(inspection.error)}`;
    }
    if (problem !== undefined) {
      failed.push(name);
      io.stdout(
        `  FAILED: ${problem}\n  fix: start it, or correct upstreams.${name} (baseUrl, token, dialect) in ${source}\n`,
      );
    }
  }
  if (failed.length > 0) {
    io.stdout(`upstreams failing: ${failed.join(', ')}\n`);
    return EXIT_EXCHANGE_ERROR;
  }
  io.stdout('all checks passed\n');
  return EXIT_OK;
}
