/**
 * The proxy's exchange log: which logger `tpx serve` writes to, and at which level one exchange line
 * goes — `warn` for a server-side failure, `info` otherwise, `debug` for the routine checks a client
 * makes before it starts.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createServerLogger, logExchange, type ExchangeRecord } from '../../src/server/logger.js';

function memoryLogger() {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  return {
    logger: pino({ level: 'debug' }, destination),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const RECORD: ExchangeRecord = {
  requestId: 'req_7',
  method: 'POST',
  path: '/v1/messages',
  provider: 'anthropic',
  status: 200,
  durationMs: 12.5,
  model: 'claude-x',
};

/** pino's numbers for its levels. */
const DEBUG = 20;
const INFO = 30;
const WARN = 40;

describe('logExchange', () => {
  it('writes one line per exchange with the record’s fields, at info below 500 and warn from 500', () => {
    const { logger, lines } = memoryLogger();
    logExchange(logger, RECORD);
    logExchange(logger, { ...RECORD, status: 499 });
    logExchange(logger, { ...RECORD, status: 500, error: 'MODEL_EHTTP' });
    logExchange(logger, { ...RECORD, status: 529 });
    expect(lines().map((line) => [line['level'], line['msg'], line['status']])).toStrictEqual([
      [INFO, 'exchange', 200],
      [INFO, 'exchange', 499],
      [WARN, 'exchange', 500],
      [WARN, 'exchange', 529],
    ]);
    const [first] = lines();
    expect({ ...first, time: 0, pid: 0, hostname: '' }).toStrictEqual({
      level: INFO,
      time: 0,
      pid: 0,
      hostname: '',
      msg: 'exchange',
      ...RECORD,
    });
  });

  it('writes at debug when asked, unless the exchange failed on the server side', () => {
    const { logger, lines } = memoryLogger();
    logExchange(logger, RECORD, 'debug');
    logExchange(logger, { ...RECORD, status: 404 }, 'debug');
    logExchange(logger, { ...RECORD, status: 502 }, 'debug');
    logExchange(logger, RECORD, 'info');
    expect(lines().map((line) => [line['level'], line['msg'], line['status']])).toStrictEqual([
      [DEBUG, 'exchange', 200],
      [DEBUG, 'exchange', 404],
      [WARN, 'exchange', 502],
      [INFO, 'exchange', 200],
    ]);
  });
});

describe('createServerLogger', () => {
  it('uses the caller’s logger as it is', () => {
    const { logger } = memoryLogger();
    expect(createServerLogger(logger)).toBe(logger);
  });

  it('logs nothing for false', () => {
    const silent = createServerLogger(false);
    expect(silent.isLevelEnabled('error')).toBe(false);
    expect(silent.isLevelEnabled('fatal')).toBe(false);
  });

  it('makes a logger named tpx-serve at info level by default', () => {
    const logger = createServerLogger(undefined);
    expect(logger.bindings()).toStrictEqual({ name: 'tpx-serve' });
    expect(logger.level).toBe('info');
    expect(logger.isLevelEnabled('info')).toBe(true);
    expect(logger.isLevelEnabled('debug')).toBe(false);
  });
});
