import { describe, expect, it } from 'vitest';
import { httpStatus, isErrorStatus } from './upstream-error-kinds.js';

describe('isErrorStatus', () => {
  it('is true for whole statuses from 400 to 599 only', () => {
    expect([399, 400, 404, 599, 600, 500.5].map(isErrorStatus)).toStrictEqual([
      false,
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});

describe('httpStatus', () => {
  it('reads an error status given as a number or as a string of three digits', () => {
    expect(httpStatus(429)).toBe(429);
    expect(httpStatus('503')).toBe(503);
    expect(httpStatus('599')).toBe(599);
  });

  it('reads nothing from other values', () => {
    for (const value of [
      '429 ',
      ' 429',
      '4290',
      '42',
      'abc',
      '200',
      200,
      600,
      '600',
      null,
      undefined,
      [429],
      { code: 429 },
    ]) {
      expect(httpStatus(value)).toBeUndefined();
    }
  });
});
