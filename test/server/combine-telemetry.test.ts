/**
 * `combineTelemetry`: metrics and traces run as one telemetry — each told about every exchange, its
 * attempts, its stream and its end, in order, with the headers their observers add merged so that an
 * earlier telemetry's header wins.
 */
import { describe, expect, it } from 'vitest';
import type { ExchangeObserver } from '../../src/providers/observer.js';
import type { ExchangeOutcome, ExchangeStart, Telemetry } from '../../src/telemetry/exchange-telemetry.js';
import { combineTelemetry } from '../../src/telemetry/exchange-telemetry.js';

const START: ExchangeStart = { method: 'POST', path: '/v1/messages', headers: {} };
const OUTCOME: ExchangeOutcome = {
  record: {
    requestId: 'req_1',
    method: 'POST',
    path: '/v1/messages',
    provider: 'tpx',
    status: 200,
    durationMs: 3,
  },
};

/** A telemetry that writes what it is told into `calls`, named `name`. */
function recording(
  name: string,
  calls: string[],
  observer?: (name: string, calls: string[]) => ExchangeObserver,
): Telemetry {
  return {
    startExchange(start) {
      calls.push(`${name} start ${start.method} ${start.path}`);
      return {
        ...(observer === undefined ? {} : { observer: observer(name, calls) }),
        streamOpened() {
          calls.push(`${name} stream`);
        },
        end(outcome) {
          calls.push(`${name} end ${outcome.record.status}`);
        },
      };
    },
  };
}

function headersObserver(headers: Record<string, string> | undefined) {
  return (name: string, calls: string[]): ExchangeObserver => ({
    onAttemptStart(attempt) {
      calls.push(`${name} attempt ${attempt.number}`);
      return headers;
    },
    onAttemptEnd(attempt) {
      calls.push(`${name} attempt ${attempt.number} ended ${String(attempt.status)}`);
    },
  });
}

describe('combineTelemetry', () => {
  it('is undefined without any telemetry, and the one telemetry itself when only one is present', () => {
    const calls: string[] = [];
    const only = recording('a', calls);
    expect(combineTelemetry()).toBeUndefined();
    expect(combineTelemetry(undefined, undefined)).toBeUndefined();
    expect(combineTelemetry(undefined, only)).toBe(only);
    expect(combineTelemetry(only, undefined)).toBe(only);
  });

  it('tells every telemetry about the start, the stream and the end of each exchange, in order', () => {
    const calls: string[] = [];
    const combined = combineTelemetry(recording('a', calls), undefined, recording('b', calls));
    const exchange = combined?.startExchange(START);
    exchange?.streamOpened();
    exchange?.end(OUTCOME);
    expect(calls).toStrictEqual([
      'a start POST /v1/messages',
      'b start POST /v1/messages',
      'a stream',
      'b stream',
      'a end 200',
      'b end 200',
    ]);
  });

  it('has no observer when none of them observes attempts, and the one observer when one does', () => {
    const calls: string[] = [];
    const withoutObservers = combineTelemetry(recording('a', calls), recording('b', calls));
    expect(withoutObservers?.startExchange(START)).not.toHaveProperty('observer');

    const single = combineTelemetry(
      recording('a', calls),
      recording('b', calls, headersObserver({ x: '1' })),
    );
    const observer = single?.startExchange(START).observer;
    calls.length = 0;
    expect(observer?.onAttemptStart?.({ number: 1, provider: 'tpx' })).toStrictEqual({ x: '1' });
    expect(calls).toStrictEqual(['b attempt 1']);
  });

  it('tells every observer about each attempt and merges their headers, the earlier telemetry’s winning', () => {
    const calls: string[] = [];
    const combined = combineTelemetry(
      recording('a', calls, headersObserver({ traceparent: 'from-a', 'x-a': '1' })),
      recording('b', calls, headersObserver(undefined)),
      recording('c', calls, headersObserver({ traceparent: 'from-c', 'x-c': '3' })),
    );
    const observer = combined?.startExchange(START).observer;
    calls.length = 0;
    expect(observer?.onAttemptStart?.({ number: 2, provider: 'anthropic' })).toStrictEqual({
      traceparent: 'from-a',
      'x-a': '1',
      'x-c': '3',
    });
    observer?.onAttemptEnd?.({ number: 2, provider: 'anthropic', status: 529, durationMs: 1 });
    expect(calls).toStrictEqual([
      'a attempt 2',
      'b attempt 2',
      'c attempt 2',
      'a attempt 2 ended 529',
      'b attempt 2 ended 529',
      'c attempt 2 ended 529',
    ]);
  });

  it('merges the headers of two observers the same way, the first telemetry’s winning', () => {
    const calls: string[] = [];
    const combined = combineTelemetry(
      recording('a', calls, headersObserver({ traceparent: 'from-a' })),
      recording('b', calls, headersObserver({ traceparent: 'from-b', 'x-b': '2' })),
    );
    const exchange = combined?.startExchange(START);
    calls.length = 0;
    expect(exchange?.observer?.onAttemptStart?.({ number: 1, provider: 'tpx' })).toStrictEqual({
      traceparent: 'from-a',
      'x-b': '2',
    });
    exchange?.observer?.onAttemptEnd?.({ number: 1, provider: 'tpx', status: 200, durationMs: 1 });
    exchange?.end(OUTCOME);
    expect(calls).toStrictEqual([
      'a attempt 1',
      'b attempt 1',
      'a attempt 1 ended 200',
      'b attempt 1 ended 200',
      'a end 200',
      'b end 200',
    ]);
  });

  it('adds no headers when no observer returns any, and skips observers without the hook', () => {
    const calls: string[] = [];
    const endOnly = (name: string, into: string[]): ExchangeObserver => ({
      onAttemptEnd() {
        into.push(`${name} ended`);
      },
    });
    const combined = combineTelemetry(
      recording('a', calls, headersObserver(undefined)),
      recording('b', calls, endOnly),
    );
    const observer = combined?.startExchange(START).observer;
    expect(observer?.onAttemptStart?.({ number: 1, provider: 'tpx' })).toBeUndefined();
    // An observer written in JavaScript may answer null: that adds no headers either.
    const returnsNull = (): ExchangeObserver => ({ onAttemptStart: () => null as unknown as undefined });
    const nulls = combineTelemetry(recording('e', calls, returnsNull), recording('f', calls, returnsNull));
    expect(
      nulls?.startExchange(START).observer?.onAttemptStart?.({ number: 1, provider: 'tpx' }),
    ).toBeUndefined();
    const startOnly = (): ExchangeObserver => ({ onAttemptStart: () => ({ y: '2' }) });
    const other = combineTelemetry(recording('c', calls, startOnly), recording('d', calls, startOnly));
    const both = other?.startExchange(START).observer;
    expect(() => both?.onAttemptEnd?.({ number: 1, provider: 'tpx', durationMs: 1 })).not.toThrow();
    expect(both?.onAttemptStart?.({ number: 1, provider: 'tpx' })).toStrictEqual({ y: '2' });
  });
});
