import { describe, expect, it } from 'vitest';
import { responseTooLarge } from './response-too-large.js';

describe('responseTooLarge', () => {
  it('blames the upstream with a 502 api_error, never a 413 that blames the caller', () => {
    const error = responseTooLarge('tpx', 'too big');
    expect(error).toMatchObject({ code: 'MODEL_ETOOBIG', status: 502, provider: 'tpx', message: 'too big' });
    expect(error.body.error.type).toBe('api_error');
  });
});
