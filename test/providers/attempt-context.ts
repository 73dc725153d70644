/**
 * An attempt context for calling a provider, or the HTTP exchange under it, directly: real HTTP on a
 * keep-alive pool of its own, a fresh cancellation, and deadlines long enough that only a test that
 * sets one short sees it fire.
 *
 * @module
 */
import type { ProviderName } from '../../src/errors.js';
import { Cancellation } from '../../src/providers/cancellation.js';
import type { Deadlines } from '../../src/providers/exchange-types.js';
import { createDispatcherPool } from '../../src/providers/dispatcher-pool.js';
import type { AttemptContext } from '../../src/providers/http-exchange.js';

export interface TestAttempt {
  context: AttemptContext;
  /** Every `report(status, headers)` the provider made. */
  reports: { status: number; headers: Record<string, string> }[];
  report: (status: number, headers: Record<string, string>) => void;
  close(): Promise<void>;
}

export function testAttempt(
  provider: ProviderName,
  overrides: Partial<Omit<AttemptContext, 'deadlines'>> & { deadlines?: Partial<Deadlines> } = {},
): TestAttempt {
  const pool = createDispatcherPool();
  const { deadlines, ...rest } = overrides;
  const context: AttemptContext = {
    cancellation: new Cancellation(),
    deadlines: {
      connectTimeoutMs: 10_000,
      firstByteTimeoutMs: 15_000,
      idleTimeoutMs: 15_000,
      timeoutMs: 30_000,
      ...deadlines,
    },
    dispatcher: (ms) => pool.get(ms),
    maxResponseBytes: 1024 * 1024,
    provider,
    ...rest,
  };
  const reports: TestAttempt['reports'] = [];
  return {
    context,
    reports,
    report: (status, headers) => reports.push({ status, headers }),
    close: () => pool.close(),
  };
}

/** The rejection of `promise` (fails the test when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, got a value');
}
