import { describe, expect, it } from 'vitest';
import { DIALECTS } from './dialects.js';
import { describeDialect } from './describe-dialect.js';

describe('describeDialect', () => {
  it('names the server family and the dialect name that selects it', () => {
    expect(describeDialect(DIALECTS.llamacpp)).toBe('llama.cpp server (dialect "llamacpp")');
    expect(describeDialect(DIALECTS['openai-generic'])).toBe(
      'a generic OpenAI-compatible server (dialect "openai-generic")',
    );
  });

  it('says "an OpenAI-compatible server" when no dialect is known', () => {
    expect(describeDialect(undefined)).toBe('an OpenAI-compatible server');
  });
});
