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

describe('model mapping: exact outcomes', () => {
  const none = readModelMapping(undefined, {}, undefined);

  it('says why each model was chosen', () => {
    expect(resolveModel(none, 'm', undefined)).toStrictEqual({
      model: 'm',
      reason: 'as requested (the upstream lists no models)',
    });
    expect(resolveModel(none, 'm', list([]))).toStrictEqual({
      model: 'm',
      reason: 'as requested (the upstream lists no models)',
    });
    expect(resolveModel(none, 'b', list(['a', 'b']))).toStrictEqual({
      model: 'b',
      reason: 'as requested (listed by the upstream)',
    });
    expect(resolveModel(readModelMapping('*=x', {}, undefined), 'm', undefined)).toStrictEqual({
      model: 'x',
      reason: 'the modelMap option rule *',
    });
  });

  it('takes the option over TPX_MODEL_MAP and keeps the catch-all only when given', () => {
    const mapping = readModelMapping('a*=from-option', { TPX_MODEL_MAP: 'a*=from-env' }, undefined);
    expect(mapping.rulesSource).toBe('the modelMap option');
    expect(mapping.rules.map((rule) => rule.model)).toStrictEqual(['from-option']);
    expect('catchAll' in mapping).toBe(false);
    expect(readModelMapping(undefined, {}, 'fallback')).toMatchObject({
      rules: [],
      rulesSource: 'TPX_MODEL_MAP',
      catchAll: 'fallback',
    });
  });

  it('refuses a non-Claude name with several models listed, with the whole message and a 404', () => {
    let caught: unknown;
    try {
      resolveModel(none, 'gpt-4o', list(['a', 'b', 'c']));
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: 'MODEL_EINVAL',
      status: 404,
      message:
        'the upstream does not serve the model "gpt-4o"; http://127.0.0.1:8000/v1/models lists: a, b, c. Map the ' +
        "requested names to served ones with TPX_MODEL_MAP (--model-map), e.g. '*haiku*=a,*=c', set TPX_MODEL to " +
        'one of them, or ask for one by name',
    });
  });

  it('lists at most twelve models in a refusal, then how many more', () => {
    const ids = Array.from({ length: 14 }, (_, index) => `m${index}`);
    expect(() => resolveModel(none, 'x', list(ids))).toThrow(
      'lists: m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11 and 2 more.',
    );
    expect(() => resolveModel(none, 'x', list(ids.slice(0, 12)))).toThrow(
      'lists: m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11. Map',
    );
  });

  it('matches the whole name, with ? standing for exactly one character', () => {
    const mapping = readModelMapping('claude-?=one,haiku=exact', {}, undefined);
    expect(resolveModel(mapping, 'claude-3', undefined).model).toBe('one');
    expect(resolveModel(mapping, 'claude-', undefined).model).toBe('claude-');
    expect(resolveModel(mapping, 'claude-35', undefined).model).toBe('claude-35');
    expect(resolveModel(mapping, 'claude-haiku', undefined).model).toBe('claude-haiku');
    expect(resolveModel(mapping, 'haiku-4', undefined).model).toBe('haiku-4');
  });

  it('treats regular-expression characters in a pattern literally', () => {
    const mapping = readModelMapping(
      'a+b=plus,(x)=paren,[y]=bracket,c|d=bar,e^$=anchors,f\\g=slash,h{1}=brace',
      {},
      undefined,
    );
    expect(
      ['a+b', 'aab', '(x)', 'x', '[y]', 'y', 'c|d', 'c', 'e^$', 'f\\g', 'h{1}', 'h'].map(
        (name) => resolveModel(mapping, name, undefined).model,
      ),
    ).toStrictEqual([
      'plus',
      'aab',
      'paren',
      'x',
      'bracket',
      'y',
      'bar',
      'c',
      'anchors',
      'slash',
      'brace',
      'h',
    ]);
  });

  it('does not map a Claude name to a single listed model when the name is listed or a rule decides', () => {
    expect(resolveModel(none, 'claude-x', list(['claude-x']))).toStrictEqual({
      model: 'claude-x',
      reason: 'as requested (listed by the upstream)',
    });
    expect(() => resolveModel(none, 'claude-x', list(['a', 'b']))).toThrow(
      /does not serve the model "claude-x"/,
    );
    expect(resolveModel(none, 'CLAUDE-X', list(['only']))).toStrictEqual({
      model: 'only',
      reason: "the upstream's only model",
    });
  });

  it('refuses an entry without "=", quoting it whole', () => {
    expect(() => parseModelMap('a=b, haiku ', 'TPX_MODEL_MAP')).toThrow(
      `TPX_MODEL_MAP has an entry that is not pattern=model: "haiku"; expected e.g. '*haiku*=qwen3-4b,*=qwen3-32b'`,
    );
    expect(parseModelMap('a = b=c', 'x').map((rule) => [rule.pattern, rule.model])).toStrictEqual([
      ['a', 'b=c'],
    ]);
  });
});
