import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import { parseModelMap, readModelMapping, resolveModel } from './model-map.js';

const list = (ids: string[]) => ({ ids, url: 'http://127.0.0.1:8000/v1/models' });

describe('parseModelMap', () => {
  it('reads comma-separated pattern=model rules, trimming whitespace and skipping empty entries', () => {
    const rules = parseModelMap(' *haiku*=qwen3-4b , ,*=qwen3-32b,', 'TPX_MODEL_MAP');
    expect(rules.map((rule) => [rule.pattern, rule.model])).toEqual([
      ['*haiku*', 'qwen3-4b'],
      ['*', 'qwen3-32b'],
    ]);
  });

  it('refuses an entry without a pattern or a model, naming the source', () => {
    expect(() => parseModelMap('=qwen', 'TPX_MODEL_MAP')).toThrow(/TPX_MODEL_MAP has an entry/);
    expect(() => parseModelMap('claude-*=', '--model-map')).toThrow(/--model-map has an entry/);
  });

  it('matches globs case-insensitively and treats other characters literally', () => {
    const mapping = readModelMapping('claude-?-*=a,gpt-4.1=b', {}, undefined);
    expect(resolveModel(mapping, 'CLAUDE-3-opus', undefined).model).toBe('a');
    expect(resolveModel(mapping, 'gpt-4.1', undefined).model).toBe('b');
    // The dot is literal: gpt-4x1 matches no rule and passes through.
    expect(resolveModel(mapping, 'gpt-4x1', undefined).model).toBe('gpt-4x1');
  });
});

describe('resolveModel', () => {
  it('takes the first matching rule, then the catch-all', () => {
    const mapping = readModelMapping('*haiku*=small,*sonnet*=medium', {}, 'large');
    expect(resolveModel(mapping, 'claude-haiku-4-5', list(['x'])).model).toBe('small');
    expect(resolveModel(mapping, 'claude-opus-4-1', list(['x']))).toEqual({
      model: 'large',
      reason: 'TPX_MODEL',
    });
  });

  it('reads TPX_MODEL_MAP from the environment when no option is given', () => {
    const mapping = readModelMapping(undefined, { TPX_MODEL_MAP: '*=from-env' }, undefined);
    expect(resolveModel(mapping, 'anything', undefined)).toEqual({
      model: 'from-env',
      reason: 'TPX_MODEL_MAP rule *',
    });
  });

  it('passes a name through unchanged when the upstream list is unknown or holds it', () => {
    const mapping = readModelMapping(undefined, {}, undefined);
    expect(resolveModel(mapping, 'claude-opus-4-1', undefined).model).toBe('claude-opus-4-1');
    expect(resolveModel(mapping, 'b', list(['a', 'b'])).model).toBe('b');
  });

  it("maps Claude names to the upstream's only model, but not other names", () => {
    const mapping = readModelMapping(undefined, {}, undefined);
    expect(resolveModel(mapping, 'claude-sonnet-4-5', list(['qwen3']))).toEqual({
      model: 'qwen3',
      reason: "the upstream's only model",
    });
    expect(() => resolveModel(mapping, 'gpt-4o', list(['qwen3']))).toThrow(
      /does not serve the model "gpt-4o"/,
    );
  });

  it('refuses with a 404 listing the served models and naming TPX_MODEL_MAP', () => {
    const mapping = readModelMapping(undefined, {}, undefined);
    let caught: unknown;
    try {
      resolveModel(mapping, 'claude-opus-4-1', list(['a', 'b']));
    } catch (error) {
      caught = error;
    }
    expect(isTransportError(caught) && caught.status).toBe(404);
    expect(isTransportError(caught) && caught.body.error.type).toBe('not_found_error');
    expect((caught as Error).message).toContain('http://127.0.0.1:8000/v1/models lists: a, b');
    expect((caught as Error).message).toContain("TPX_MODEL_MAP (--model-map), e.g. '*haiku*=a,*=b'");
  });
});
