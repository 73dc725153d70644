/**
 * What goes upstream instead of the caller's request, when anything must change: the model (mapping)
 * and `max_tokens` (output caps). Everything else is the caller's request as validated.
 *
 * @module
 */
import type { MessagesRequest } from '../protocol/messages.js';
import { estimateInputTokensInSlices } from '../providers/estimate-tokens-in-slices.js';
import type { CountTextTokens } from '../translate/estimate-input-tokens.js';
import {
  needsModelList,
  resolveModel,
  type ModelChoice,
  type ModelMapping,
  type UpstreamModelList,
} from './model-map.js';
import { capOutputTokens } from './output-cap.js';
import type { UpstreamCatalog } from './upstream-catalog.js';
import type { UpstreamPolicy, UpstreamReport } from './types.js';

/** The request to send, and what changed. */
export interface ShapedRequest {
  request: MessagesRequest;
  /** Set when the model sent upstream differs from the requested one. */
  upstreamModel?: string;
  /** Set when `max_tokens` was lowered. */
  upstreamMaxTokens?: number;
}

/** What shaping depends on. */
export interface ShaperConfig {
  mapping: ModelMapping;
  /** `TPX_MAX_TOKENS`. */
  configuredCap: number | undefined;
  /** The upstream's catalog, when the transport may ask (the `inspectUpstream` option). */
  catalog: UpstreamCatalog | undefined;
  /** Whether unmapped names are checked against the upstream's list (the `tpx` provider). */
  usesModelList: boolean;
  countText: () => Promise<CountTextTokens>;
}

/** Shapes requests; `idle` when there is nothing it could ever change, so callers can skip it. */
export interface RequestShaper {
  readonly idle: boolean;
  shape(request: MessagesRequest): Promise<ShapedRequest>;
  readonly policy: UpstreamPolicy;
}

function listOf(report: UpstreamReport | undefined): UpstreamModelList | undefined {
  if (report?.models === undefined) return undefined;
  return { ids: report.models.map((model) => model.id), url: report.modelsUrl };
}

/** Creates the shaper. */
export function createRequestShaper(config: ShaperConfig): RequestShaper {
  const { mapping, catalog, configuredCap } = config;
  const idle =
    mapping.rules.length === 0 &&
    mapping.catchAll === undefined &&
    configuredCap === undefined &&
    catalog === undefined;

  async function choose(requested: string): Promise<{ choice: ModelChoice; report?: UpstreamReport }> {
    const wantsList = config.usesModelList && needsModelList(mapping, requested);
    const report = catalog === undefined ? undefined : await catalog.get();
    const choice = resolveModel(mapping, requested, wantsList ? listOf(report) : undefined);
    return report === undefined ? { choice } : { choice, report };
  }

  return {
    idle,
    async shape(request) {
      const { choice, report } = await choose(request.model);
      const contextWindow =
        report?.models?.find((model) => model.id === choice.model)?.contextWindow ??
        report?.contextWindow?.tokens;
      const estimatedInputTokens =
        contextWindow === undefined
          ? undefined
          : // Counted in slices: a long conversation must not hold the proxy's event loop.
            await estimateInputTokensInSlices(request, await config.countText());
      const cap = capOutputTokens({
        requested: request.max_tokens,
        configuredCap,
        contextWindow,
        estimatedInputTokens,
      });
      const shaped: ShapedRequest = { request };
      if (choice.model !== request.model) shaped.upstreamModel = choice.model;
      if (cap.maxTokens !== request.max_tokens) shaped.upstreamMaxTokens = cap.maxTokens;
      if (shaped.upstreamModel !== undefined || shaped.upstreamMaxTokens !== undefined) {
        shaped.request = { ...request, model: choice.model, max_tokens: cap.maxTokens };
      }
      return shaped;
    },
    policy: {
      modelRules: mapping.rules.map((rule) => ({ pattern: rule.pattern, model: rule.model })),
      ...(mapping.catchAll === undefined ? {} : { catchAllModel: mapping.catchAll }),
      usesUpstreamModelList: catalog !== undefined && config.usesModelList,
      ...(configuredCap === undefined ? {} : { maxTokens: configuredCap }),
      capsToContextWindow: catalog !== undefined,
      async resolveModel(requested) {
        const { choice } = await choose(requested);
        return { model: choice.model, reason: choice.reason };
      },
    },
  };
}
