/**
 * Which exchanges are recorded, as `OTEL_TRACES_SAMPLER` asks (the specification's built-in samplers
 * that need nothing outside the process). A pure function of the setting, the caller's sampled flag and
 * the trace id, so every replica of a scaled-out proxy decides the same for the same trace.
 *
 * @module
 */
import type { SpanContextId } from './span-context-id.js';

/** The samplers of the specification's `OTEL_TRACES_SAMPLER` that a process can apply on its own. */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/**
 * Which exchanges are traced (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`, read by `tracing.ts`). The
 * default is the specification's: follow the caller's sampled flag, trace every exchange that has no
 * parent.
 */
export interface SamplerSettings {
  name: (typeof SAMPLERS)[number];
  /** For the two ratio samplers: the share of traces recorded, from 0 to 1 (default 1). */
  ratio?: number;
}

/** 2^52: the trace id's last 13 hex digits are read as an integer below this (exact in a double). */
const RATIO_SCALE = 2 ** 52;

/**
 * Whether a trace id falls within `ratio`: its last 52 bits (random in every W3C trace id, whose last
 * seven bytes are random by Trace Context Level 2) as a fraction of 2^52, below the ratio. A ratio of 0
 * keeps nothing, 1 everything.
 */
export function isWithinRatio(traceId: string, ratio: number): boolean {
  return Number.parseInt(traceId.slice(-13), 16) < ratio * RATIO_SCALE;
}

/**
 * Whether to record an exchange of trace `traceId`. Only the ratio samplers read the id (spelled in hex).
 *
 * @param isParentSampled The caller's sampled flag from its `traceparent`, or `undefined` when the
 * exchange has no parent. The parent-based samplers follow it (a sampled parent is recorded, an
 * unsampled one is not) and apply their root sampler only to exchanges without one.
 */
export function isTraceSampled(
  sampler: SamplerSettings,
  isParentSampled: boolean | undefined,
  traceId: SpanContextId,
): boolean {
  switch (sampler.name) {
    case 'always_on':
      return true;
    case 'always_off':
      return false;
    case 'traceidratio':
      return isWithinRatio(traceId.hex, sampler.ratio ?? 1);
    case 'parentbased_always_on':
      return isParentSampled ?? true;
    case 'parentbased_always_off':
      return isParentSampled ?? false;
    case 'parentbased_traceidratio':
      return isParentSampled ?? isWithinRatio(traceId.hex, sampler.ratio ?? 1);
  }
}
