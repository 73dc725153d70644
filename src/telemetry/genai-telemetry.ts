/**
 * Spans and GenAI client metrics of each exchange, following the OpenTelemetry GenAI semantic
 * conventions, written against `@opentelemetry/api` alone: whatever SDK the process registered records
 * them (`tracing.ts` registers one for `tpx serve`; an application embedding `startServer` registers its
 * own and gets these spans inside its traces). With no SDK registered the API's no-op tracer and meter
 * take the calls.
 *
 * - One `SERVER` span per model exchange, named `<operation> <requested model>`: a child of the span
 *   active when the request came in (an HTTP instrumentation's), else of the W3C `traceparent` the
 *   request carries, else the root of a new trace.
 * - One `CLIENT` child span per upstream attempt (`chat attempt 1`, …), whose context the registered
 *   propagator writes into that attempt's request headers, so that a traced model server joins the trace.
 * - The histograms `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`, with the
 *   conventions' advised buckets.
 *
 * The meter is taken when the telemetry is made (the metrics API has no proxy that waits for a later
 * registration), the tracer through the API's proxy, which does.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import {
  context,
  metrics,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Histogram,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { AttemptEnd, AttemptStart, ExchangeObserver } from '../providers/observer.js';
import type { ExchangeOutcome, ExchangeStart, ExchangeTelemetry, Telemetry } from './exchange-telemetry.js';

/** The instrumentation scope of every span and metric. */
export const INSTRUMENTATION_SCOPE = 'tpx-transport';

/** Token-count bucket boundaries the GenAI semantic conventions advise. */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** Duration bucket boundaries the GenAI semantic conventions advise, in seconds. */
const DURATION_BUCKETS_SECONDS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];

/** The routes that are model exchanges, and their `gen_ai.operation.name`. */
const OPERATIONS: ReadonlyMap<string, string> = new Map([
  ['/v1/messages', 'chat'],
  ['/v1/messages/count_tokens', 'count_tokens'],
  ['/v1/models', 'list_models'],
]);

/** Options of {@link createGenAiTelemetry}. */
export interface GenAiTelemetryOptions {
  /** `gen_ai.provider.name`: `anthropic`, `openai`, … (see {@link genAiProviderName}). */
  providerName: string;
  /** The instrumentation scope's version. @default this package's version */
  version?: string | undefined;
}

/** Maps the transport's provider and dialect to the GenAI conventions' `gen_ai.provider.name`. */
export function genAiProviderName(provider: string, dialect: string | undefined): string {
  if (provider !== 'tpx' || dialect === undefined) return provider === 'tpx' ? 'openai-compatible' : provider;
  switch (dialect) {
    case 'azure':
      return 'azure.ai.openai';
    case 'vertex':
      return 'gcp.vertex_ai';
    case 'gemini':
      return 'gcp.gemini';
    case 'mistral':
      return 'mistral_ai';
    default:
      // The conventions name `openai`, `deepseek` and `groq` as their dialects are named. A self-hosted
      // or aggregating server (vLLM, llama.cpp, Ollama, OpenRouter, …) has no name there, so its dialect
      // profile is the most useful one.
      return dialect;
  }
}

/** This package's version, for the instrumentation scope (`undefined` when it cannot be read). */
export function packageVersion(): string | undefined {
  try {
    // Two levels up from `src/telemetry/` and from `dist/telemetry/` alike.
    const json = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: unknown;
    };
    return typeof json.version === 'string' ? json.version : undefined;
  } catch {
    return undefined;
  }
}

/** What every exchange of one telemetry shares. */
interface Instruments {
  readonly providerName: string;
  readonly tracer: Tracer;
  readonly tokenUsage: Histogram;
  readonly duration: Histogram;
}

/** A token count worth recording: finite and not negative (upstream numbers are untrusted). */
function isTokenCount(count: number | undefined): count is number {
  return count !== undefined && count >= 0 && Number.isFinite(count);
}

/** The telemetry of a route that is not a model exchange: nothing. */
const SKIPPED: ExchangeTelemetry = { streamOpened() {}, end() {} };

/** One exchange's span, its attempts' child spans, and its GenAI measurements; its own observer. */
class TracedExchange implements ExchangeTelemetry, ExchangeObserver {
  readonly observer: ExchangeObserver = this;
  readonly #instruments: Instruments;
  readonly #operation: string;
  readonly #startedMs = performance.now();
  readonly #span: Span;
  /** The context the exchange span is active in: the parent of its attempts' spans. */
  readonly #context: Context;
  /** The attempts in flight, by number (a retry may start before an abandoned attempt has ended). */
  readonly #attempts = new Map<number, Span>();
  #responseModel: string | undefined;

  constructor(instruments: Instruments, operation: string, start: ExchangeStart) {
    this.#instruments = instruments;
    this.#operation = operation;
    const active = context.active();
    // An HTTP instrumentation's span, when there is one, already continues the request's `traceparent`.
    const parent = trace.getSpan(active) === undefined ? propagation.extract(active, start.headers) : active;
    this.#span = instruments.tracer.startSpan(
      operation,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'gen_ai.operation.name': operation,
          'gen_ai.provider.name': instruments.providerName,
          'http.request.method': start.method,
          'url.path': start.path,
        },
      },
      parent,
    );
    this.#context = trace.setSpan(parent, this.#span);
  }

  onAttemptStart(attempt: AttemptStart): Record<string, string> | undefined {
    const span = this.#instruments.tracer.startSpan(
      `${this.#operation} attempt ${attempt.number}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'gen_ai.provider.name': this.#instruments.providerName, 'tpx.attempt': attempt.number },
      },
      this.#context,
    );
    this.#attempts.get(attempt.number)?.end();
    this.#attempts.set(attempt.number, span);
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(this.#context, span), headers);
    return Object.keys(headers).length === 0 ? undefined : headers;
  }

  onAttemptEnd(attempt: AttemptEnd): void {
    if (attempt.upstreamModel !== undefined) this.#responseModel = attempt.upstreamModel;
    const span = this.#attempts.get(attempt.number);
    if (span === undefined) return;
    this.#attempts.delete(attempt.number);
    if (attempt.upstreamModel !== undefined) span.setAttribute('gen_ai.request.model', attempt.upstreamModel);
    if (attempt.status !== undefined) span.setAttribute('http.response.status_code', attempt.status);
    // With routes: which named upstream the attempt went to (fallbacks show as attempts on another).
    if (attempt.upstream !== undefined) span.setAttribute('tpx.upstream', attempt.upstream);
    if (attempt.error !== undefined) {
      span.setAttribute('error.type', attempt.error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: attempt.error.message });
    }
    span.end();
  }

  streamOpened(): void {}

  end({ record, stopReason }: ExchangeOutcome): void {
    this.#recordHistograms(record);
    const span = this.#span;
    if (record.model !== undefined) span.updateName(`${this.#operation} ${record.model}`);
    const attributes: Attributes = {
      'http.response.status_code': record.status,
      'tpx.request_id': record.requestId,
    };
    if (record.model !== undefined) attributes['gen_ai.request.model'] = record.model;
    if (this.#responseModel !== undefined) attributes['gen_ai.response.model'] = this.#responseModel;
    if (stopReason !== undefined) attributes['gen_ai.response.finish_reasons'] = [stopReason];
    const usage = record.usage;
    if (usage?.input_tokens !== undefined) attributes['gen_ai.usage.input_tokens'] = usage.input_tokens;
    if (usage?.output_tokens !== undefined) attributes['gen_ai.usage.output_tokens'] = usage.output_tokens;
    if (record.retries !== undefined) {
      // Why each retry happened, in order: `attempt 1: MODEL_ETIMEOUT (first-byte): the … endpoint sent no …`.
      attributes['tpx.retry.reasons'] = record.retries.map(
        (retry) =>
          `attempt ${retry.attempt}: ${retry.error}${retry.status === undefined ? '' : ` ${retry.status}`}` +
          `${retry.deadline === undefined ? '' : ` (${retry.deadline})`}: ${retry.reason}`,
      );
    }
    if (record.error !== undefined) {
      attributes['error.type'] = record.error;
      span.setStatus({ code: SpanStatusCode.ERROR, message: record.errorMessage ?? record.error });
    }
    span.setAttributes(attributes);
    // An attempt the transport never ended (it cannot happen, but a span left open is never exported).
    for (const attempt of this.#attempts.values()) attempt.end();
    this.#attempts.clear();
    span.end();
  }

  /** The exchange's duration, and its token counts when they are counts. */
  #recordHistograms(record: ExchangeOutcome['record']): void {
    const attributes: Attributes = {
      'gen_ai.operation.name': this.#operation,
      'gen_ai.provider.name': this.#instruments.providerName,
    };
    if (record.model !== undefined) attributes['gen_ai.request.model'] = record.model;
    if (this.#responseModel !== undefined) attributes['gen_ai.response.model'] = this.#responseModel;
    if (record.error !== undefined) attributes['error.type'] = record.error;
    const durationSeconds = (performance.now() - this.#startedMs) / 1000;
    this.#instruments.duration.record(durationSeconds, attributes);
    const { tokenUsage } = this.#instruments;
    const input = record.usage?.input_tokens;
    const output = record.usage?.output_tokens;
    if (isTokenCount(input)) tokenUsage.record(input, { ...attributes, 'gen_ai.token.type': 'input' });
    if (isTokenCount(output)) tokenUsage.record(output, { ...attributes, 'gen_ai.token.type': 'output' });
  }
}

/**
 * The spans and GenAI histograms of each model exchange (`/v1/messages`, `/v1/messages/count_tokens`,
 * `/v1/models`), through the OpenTelemetry API; other routes get none.
 */
export function createGenAiTelemetry(options: GenAiTelemetryOptions): Telemetry {
  const version = options.version ?? packageVersion();
  const meter = metrics.getMeter(INSTRUMENTATION_SCOPE, version);
  // Made in this order, they are exported in this order.
  const tokenUsage = meter.createHistogram('gen_ai.client.token.usage', {
    description: 'Number of input and output tokens used.',
    unit: '{token}',
    advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
  });
  const duration = meter.createHistogram('gen_ai.client.operation.duration', {
    description: 'GenAI operation duration.',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_SECONDS },
  });
  const instruments: Instruments = {
    providerName: options.providerName,
    tracer: trace.getTracer(INSTRUMENTATION_SCOPE, version),
    tokenUsage,
    duration,
  };
  return {
    startExchange(start) {
      const operation = OPERATIONS.get(start.path);
      return operation === undefined ? SKIPPED : new TracedExchange(instruments, operation, start);
    },
  };
}
