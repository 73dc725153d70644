/**
 * Small statistics and formatting helpers shared by the benchmark suites.
 *
 * @module
 */

/** The median of `values` (the mean of the two middle values for an even count); `NaN` when empty. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/**
 * The `p`-th percentile of `values` by linear interpolation between the closest ranks; `NaN` when empty.
 *
 * @example
 * percentile([1, 2, 3, 4], 50) // → 2.5
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const low = sorted[lower]!;
  const high = sorted[upper]!;
  return low + (high - low) * (rank - lower);
}

/** Rounds to `digits` significant digits, keeping results.json readable. */
export function round(value: number, digits = 4): number {
  if (!Number.isFinite(value) || value === 0) return value;
  return Number(value.toPrecision(digits));
}

/** A duration in the unit that suits it: `812 ns`, `3.41 µs`, `12.8 ms`, `1.52 s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  const magnitude = Math.abs(ms);
  if (magnitude < 0.001) return `${(ms * 1e6).toFixed(0)} ns`;
  if (magnitude < 1) return `${(ms * 1e3).toPrecision(3)} µs`;
  if (magnitude < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
}

/** A ratio as `1.23×`. */
export function formatRatio(ratio: number): string {
  return Number.isFinite(ratio) ? `${ratio.toFixed(2)}×` : 'n/a';
}

/** A ratio with its interquartile range over rounds: `1.23× (1.10–1.31)`. */
export function formatSpread(spread: { median: number; p25: number; p75: number }): string {
  return `${formatRatio(spread.median)} (${spread.p25.toFixed(2)}–${spread.p75.toFixed(2)})`;
}

/** A byte count as `812 B`, `3.4 KiB`, `1.02 MiB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  const magnitude = Math.abs(bytes);
  if (magnitude < 1024) return `${bytes.toFixed(0)} B`;
  if (magnitude < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
}

/** Whether a measured value meets its target, for the tables: `met`, `NOT MET` or `n/a`. */
export function verdict(value: number, target: { max?: number; min?: number }): 'met' | 'NOT MET' | 'n/a' {
  if (!Number.isFinite(value)) return 'n/a';
  if (target.max !== undefined && value > target.max) return 'NOT MET';
  if (target.min !== undefined && value < target.min) return 'NOT MET';
  return 'met';
}
