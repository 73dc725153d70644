/**
 * What is wrong with an upstream, and the fix, in words a user can act on: shared by the start-up probe
 * of `tpx serve` / `tpx claude` and by `tpx doctor`.
 *
 * @module
 */
import { isTransportError } from '../errors.js';
import type { ModelTransport, UpstreamReport } from '../transport/types.js';

/** A problem and its fix. */
export interface Advice {
  problem: string;
  fix: string;
}

/** The variable holding the upstream URL for the transport's provider. */
export function baseUrlVariable(transport: ModelTransport): string {
  return transport.provider === 'anthropic' ? 'ANTHROPIC_BASE_URL' : 'TPX_BASE_URL';
}

/** The ports the usual local servers listen on, for a fix that says "check the port". */
export const USUAL_PORTS =
  'vLLM listens on 8000, llama.cpp on 8080, Ollama on 11434 (/v1), LM Studio on 1234';

/** The path tpx appends to the base URL for an exchange. */
function endpointPath(transport: ModelTransport): string {
  if (transport.provider === 'anthropic') return 'v1/messages';
  return transport.selection.wire?.name === 'responses' ? 'responses' : 'chat/completions';
}

/** A base URL that names an endpoint instead of the API root (`…/v1/chat/completions` pasted whole). */
export function endpointPastedAsBase(transport: ModelTransport): Advice | undefined {
  const base = transport.upstreamPolicy?.baseUrl;
  if (base === undefined) return undefined;
  const match = /\/(chat\/completions|completions|messages|models|responses)\/?$/.exec(
    new URL(base).pathname,
  );
  if (match === null) return undefined;
  const root = base.slice(0, base.length - match[0].length);
  return {
    problem: `${baseUrlVariable(transport)} ends in /${match[1]!}: it names an endpoint, not the API root`,
    fix: `set ${baseUrlVariable(transport)}=${root} (tpx adds /${endpointPath(transport)} itself)`,
  };
}

/** The advice for an upstream that could not be asked at all. */
export function adviseOnError(error: unknown, transport: ModelTransport): Advice {
  const variable = baseUrlVariable(transport);
  const base = transport.upstreamPolicy?.baseUrl ?? '(none)';
  if (!isTransportError(error)) {
    return {
      problem: error instanceof Error ? error.message : String(error),
      fix: 'unexpected failure; please report it',
    };
  }
  switch (error.code) {
    case 'MODEL_ETRANSPORT':
      return {
        problem: error.message,
        fix: `start the model server, or point ${variable} at the one that runs (now ${base}); ${USUAL_PORTS}`,
      };
    case 'MODEL_ETIMEOUT':
      return {
        problem: error.message,
        fix: `check that the server at ${base} is up and answering, and ${variable}`,
      };
    case 'MODEL_EAUTH':
      return {
        problem: error.message,
        fix:
          transport.provider === 'none'
            ? 'set TPX_BASE_URL and TPX_OAUTH_TOKEN (--base-url, --token; a local server without auth accepts any token, e.g. --token local), or ANTHROPIC_API_KEY'
            : 'the upstream refused the credentials: check the key or token (and that it has not expired)',
      };
    case 'MODEL_EABORTED':
    case 'MODEL_ECONFIG':
    case 'MODEL_EHTTP':
    case 'MODEL_EINVAL':
    case 'MODEL_EPAIRING':
    case 'MODEL_EPROTO':
    case 'MODEL_ETOOBIG':
      return { problem: error.message, fix: `check ${variable} (now ${base})` };
  }
}

/** The advice for a model list that is not one, or `undefined` when the report holds a list. */
export function adviseOnReport(report: UpstreamReport, transport: ModelTransport): Advice | undefined {
  if (report.problem === undefined) return undefined;
  const variable = baseUrlVariable(transport);
  const base = transport.upstreamPolicy?.baseUrl ?? '';
  const problem = `${report.modelsUrl} ${report.problem}`;
  if (report.problem.includes('HTML') && report.modelsStatus >= 200 && report.modelsStatus <= 299) {
    return {
      problem,
      fix: `that is a web app answering every path with a page, not the model API: ${variable} points at the wrong port (${USUAL_PORTS})`,
    };
  }
  if (report.problem.includes('HTML')) {
    return {
      problem,
      fix: `the server at ${base} is a web server without the model API (a static file server?): ${variable} points at the wrong port (${USUAL_PORTS})`,
    };
  }
  if (report.modelsStatus === 404 && !/\/v1$/.test(base) && transport.provider === 'tpx') {
    return { problem, fix: `OpenAI-compatible APIs live under /v1: try ${variable}=${base}/v1` };
  }
  return {
    problem,
    fix: `the server at ${base} does not answer like the model API: check ${variable} and the port`,
  };
}
