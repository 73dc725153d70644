/**
 * The two GenAI client histograms of the OpenTelemetry semantic conventions, aggregated here and handed
 * to the SDK's periodic reader as a `MetricProducer`: `gen_ai.client.operation.duration` (seconds) and
 * `gen_ai.client.token.usage` (tokens, by `gen_ai.token.type`).
 *
 * The SDK's own histogram instruments find a series on every record by sorting and JSON-serialising the
 * attributes (`hashAttributes`): most of what three records per exchange cost. Here an exchange finds
 * its series through nested maps keyed by the values themselves (operation, request model, response
 * model, error type; the provider is the process's) and records with no allocation. What goes out is
 * what the SDK's instruments gave: the same names, units, descriptions, bucket boundaries and attribute
 * sets, explicit-bucket histograms with sum, count, min and max, cumulative temporality unless the
 * exporter asks for delta (`OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta` or `lowmemory`, read
 * by the OTLP exporter, as it was for the SDK's instruments).
 *
 * - Buckets are upper-inclusive, as OpenTelemetry's explicit buckets are: a value equal to a boundary
 *   counts in that boundary's bucket; the last bucket holds what is above the last boundary.
 * - A series' start time is when it was first recorded, as the SDK's instruments had it: a series that
 *   first appears an hour after start-up has counted for that hour, not since the process started. With
 *   delta temporality a point starts where the previous collect ended (a series' first point, when it
 *   was first recorded), and a series with nothing new since then is left out.
 * - At most {@link MAX_SERIES} distinct (operation, request model, response model, error type); a client
 *   sending many model names makes many. Past it, exchanges count in one series per histogram whose
 *   attributes are `otel.metric.overflow: true`, as the SDK does past its cardinality limit, so memory
 *   and the export stay bounded.
 *
 * @module
 */
import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type {
  AggregationTemporality,
  CollectionResult,
  DataPointType,
  HistogramMetricData,
  MetricProducer,
} from '@opentelemetry/sdk-metrics';

/** Token-count bucket boundaries the GenAI semantic conventions advise. */
export const TOKEN_BUCKETS: readonly number[] = Object.freeze([
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]);
/** Duration bucket boundaries the GenAI semantic conventions advise, in seconds. */
export const DURATION_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]);

/** Distinct (operation, request model, response model, error type) kept before the rest overflow. */
export const MAX_SERIES = 1000;

/** The attributes of the series past {@link MAX_SERIES}. */
const OVERFLOW_ATTRIBUTES: Attributes = Object.freeze({ 'otel.metric.overflow': true });

/** The SDK's enumerations, from the SDK module loaded by the caller (this file loads none of it). */
export interface MetricsSdkEnumerations {
  AggregationTemporality: typeof AggregationTemporality;
  DataPointType: typeof DataPointType;
}

/** Options of {@link GenAiHistograms}. */
export interface GenAiHistogramsOptions {
  /** `gen_ai.provider.name` on every series. */
  providerName: string;
  /** The instrumentation scope's version. */
  version?: string;
  /** The resource of the meter provider the reader belongs to (the reader keeps its own). */
  resource: Resource;
  sdk: MetricsSdkEnumerations;
  /** What the exporter asks for (`exporter.selectAggregationTemporality`). @default cumulative */
  temporality?: AggregationTemporality;
  /** The clock, as OpenTelemetry time. @default the process's clock */
  now?: () => HrTime;
}

/** Now, as OpenTelemetry's `[seconds, nanoseconds]` since the epoch, from the monotonic clock. */
function hrTimeNow(): HrTime {
  const milliseconds = performance.timeOrigin + performance.now();
  const seconds = Math.floor(milliseconds / 1000);
  return [seconds, Math.round((milliseconds - seconds * 1000) * 1e6)];
}

/** One series of one histogram: counts per bucket, sum, count, min and max since it was first recorded. */
class ExplicitHistogram {
  /** One more than the boundaries: the last holds what is above the last boundary. */
  readonly counts: number[];
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  startTime: HrTime | undefined;

  constructor(
    readonly attributes: Attributes,
    readonly boundaries: readonly number[],
  ) {
    this.counts = Array.from({ length: boundaries.length + 1 }, () => 0);
  }

  record(value: number, now: () => HrTime): void {
    this.startTime ??= now();
    const boundaries = this.boundaries;
    let index = 0;
    while (index < boundaries.length && value > boundaries[index]!) index++;
    this.counts[index]! += 1;
    this.count += 1;
    this.sum += value;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }

  /** Starts a delta period at `startTime`: nothing counted yet. */
  restart(startTime: HrTime): void {
    this.counts.fill(0);
    this.count = 0;
    this.sum = 0;
    this.min = Number.POSITIVE_INFINITY;
    this.max = Number.NEGATIVE_INFINITY;
    this.startTime = startTime;
  }
}

/** The three series an exchange records in: its duration and its input and output tokens. */
interface ExchangeSeries {
  readonly duration: ExplicitHistogram;
  readonly inputTokens: ExplicitHistogram;
  readonly outputTokens: ExplicitHistogram;
}

/** A token count the histogram records: a finite number, zero or more (upstream numbers are untrusted). */
function isTokenCount(count: number | undefined): count is number {
  return count !== undefined && count >= 0 && Number.isFinite(count);
}

/**
 * The GenAI client histograms of one process: recorded per exchange, collected by the SDK's reader.
 * Give it to `PeriodicExportingMetricReader({ metricProducers: [it] })`.
 */
export class GenAiHistograms implements MetricProducer {
  readonly #options: GenAiHistogramsOptions;
  readonly #now: () => HrTime;
  readonly #byOperation = new Map<
    string,
    Map<string | undefined, Map<string | undefined, Map<string | undefined, ExchangeSeries>>>
  >();
  /** Every series, in the order first recorded (the order of the export). */
  readonly #all: ExchangeSeries[] = [];
  #overflow: ExchangeSeries | undefined;
  /** The series of the latest record, and what it was found by (a series, once made, stays). */
  #latest: ExchangeSeries | undefined;
  #latestOperation: string | undefined;
  #latestRequestModel: string | undefined;
  #latestResponseModel: string | undefined;
  #latestErrorType: string | undefined;

  constructor(options: GenAiHistogramsOptions) {
    this.#options = options;
    this.#now = options.now ?? hrTimeNow;
  }

  /**
   * Records one exchange: its duration, and its token counts when they are finite and not negative
   * (an exchange that failed before usage came back has none).
   */
  record(
    operation: string,
    requestModel: string | undefined,
    responseModel: string | undefined,
    errorType: string | undefined,
    durationSeconds: number,
    inputTokens: number | undefined,
    outputTokens: number | undefined,
  ): void {
    const series = this.#find(operation, requestModel, responseModel, errorType);
    if (!Number.isNaN(durationSeconds)) series.duration.record(durationSeconds, this.#now);
    if (isTokenCount(inputTokens)) series.inputTokens.record(inputTokens, this.#now);
    if (isTokenCount(outputTokens)) series.outputTokens.record(outputTokens, this.#now);
  }

  #find(
    operation: string,
    requestModel: string | undefined,
    responseModel: string | undefined,
    errorType: string | undefined,
  ): ExchangeSeries {
    // Consecutive exchanges mostly record in the same series: the latest one is tried first.
    const latest = this.#latest;
    if (
      latest !== undefined &&
      operation === this.#latestOperation &&
      requestModel === this.#latestRequestModel &&
      responseModel === this.#latestResponseModel &&
      errorType === this.#latestErrorType
    ) {
      return latest;
    }
    const series = this.#lookUp(operation, requestModel, responseModel, errorType);
    this.#latest = series;
    this.#latestOperation = operation;
    this.#latestRequestModel = requestModel;
    this.#latestResponseModel = responseModel;
    this.#latestErrorType = errorType;
    return series;
  }

  #lookUp(
    operation: string,
    requestModel: string | undefined,
    responseModel: string | undefined,
    errorType: string | undefined,
  ): ExchangeSeries {
    let byRequestModel = this.#byOperation.get(operation);
    let byResponseModel = byRequestModel?.get(requestModel);
    let byErrorType = byResponseModel?.get(responseModel);
    const known = byErrorType?.get(errorType);
    if (known !== undefined) return known;
    if (this.#all.length >= MAX_SERIES) return (this.#overflow ??= this.#makeOverflow());
    if (byRequestModel === undefined) {
      byRequestModel = new Map();
      this.#byOperation.set(operation, byRequestModel);
    }
    if (byResponseModel === undefined) {
      byResponseModel = new Map();
      byRequestModel.set(requestModel, byResponseModel);
    }
    if (byErrorType === undefined) {
      byErrorType = new Map();
      byResponseModel.set(responseModel, byErrorType);
    }
    const made = this.#make(operation, requestModel, responseModel, errorType);
    byErrorType.set(errorType, made);
    this.#all.push(made);
    return made;
  }

  /** The attribute sets the SDK's instruments were given, in the same key order. */
  #make(
    operation: string,
    requestModel: string | undefined,
    responseModel: string | undefined,
    errorType: string | undefined,
  ): ExchangeSeries {
    const common: Attributes = {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': this.#options.providerName,
    };
    if (requestModel !== undefined) common['gen_ai.request.model'] = requestModel;
    if (responseModel !== undefined) common['gen_ai.response.model'] = responseModel;
    if (errorType !== undefined) common['error.type'] = errorType;
    return {
      duration: new ExplicitHistogram(Object.freeze({ ...common }), DURATION_BUCKETS_SECONDS),
      inputTokens: new ExplicitHistogram(
        Object.freeze({ ...common, 'gen_ai.token.type': 'input' }),
        TOKEN_BUCKETS,
      ),
      outputTokens: new ExplicitHistogram(
        Object.freeze({ ...common, 'gen_ai.token.type': 'output' }),
        TOKEN_BUCKETS,
      ),
    };
  }

  /** One series per histogram past the bound; input and output tokens share theirs, as in the SDK. */
  #makeOverflow(): ExchangeSeries {
    const tokens = new ExplicitHistogram(OVERFLOW_ATTRIBUTES, TOKEN_BUCKETS);
    return {
      duration: new ExplicitHistogram(OVERFLOW_ATTRIBUTES, DURATION_BUCKETS_SECONDS),
      inputTokens: tokens,
      outputTokens: tokens,
    };
  }

  /**
   * What was recorded, as the SDK's reader collects it: everything since each series was first recorded
   * (cumulative), or since the previous collect (delta).
   */
  collect(): Promise<CollectionResult> {
    const { sdk, resource, version } = this.#options;
    const temporality = this.#options.temporality ?? sdk.AggregationTemporality.CUMULATIVE;
    const isDelta = temporality === sdk.AggregationTemporality.DELTA;
    const endTime = this.#now();
    const series = this.#overflow === undefined ? this.#all : [...this.#all, this.#overflow];
    const durationSeries = series.map((each) => each.duration);
    const tokenSeries = series.flatMap((each) =>
      each.inputTokens === each.outputTokens ? [each.inputTokens] : [each.inputTokens, each.outputTokens],
    );
    const duration = points(durationSeries, endTime);
    const tokens = points(tokenSeries, endTime);
    if (isDelta) {
      for (const each of [...durationSeries, ...tokenSeries]) {
        if (each.startTime !== undefined) each.restart(endTime);
      }
    }
    const metrics: HistogramMetricData[] = [];
    const metric = (
      name: string,
      description: string,
      unit: string,
      dataPoints: HistogramMetricData['dataPoints'],
    ) => {
      if (dataPoints.length === 0) return;
      metrics.push({
        // The SDK's default for a histogram; the OTLP encoding of a histogram does not use it.
        descriptor: { name, description, unit, valueType: ValueType.DOUBLE },
        aggregationTemporality: temporality,
        dataPointType: sdk.DataPointType.HISTOGRAM,
        dataPoints,
      });
    };
    metric('gen_ai.client.token.usage', 'Number of input and output tokens used.', '{token}', tokens);
    metric('gen_ai.client.operation.duration', 'GenAI operation duration.', 's', duration);
    const scope = version === undefined ? { name: 'tpx-transport' } : { name: 'tpx-transport', version };
    return Promise.resolve({
      resourceMetrics: {
        resource,
        // No scope at all while nothing was recorded: the reader then exports nothing.
        scopeMetrics: metrics.length === 0 ? [] : [{ scope, metrics }],
      },
      errors: [],
    });
  }
}

/** The data points of the series that hold anything, copied (the export may outlive the collect). */
function points(series: readonly ExplicitHistogram[], endTime: HrTime): HistogramMetricData['dataPoints'] {
  const dataPoints: HistogramMetricData['dataPoints'] = [];
  for (const each of series) {
    if (each.count === 0 || each.startTime === undefined) continue;
    dataPoints.push({
      attributes: each.attributes,
      startTime: each.startTime,
      endTime,
      value: {
        buckets: { boundaries: [...each.boundaries], counts: [...each.counts] },
        count: each.count,
        sum: each.sum,
        min: each.min,
        max: each.max,
      },
    });
  }
  return dataPoints;
}
