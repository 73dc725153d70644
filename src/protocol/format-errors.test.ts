import Type, { type TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { compileChecker } from './compile-checker.js';
import { describeErrors, formatPath } from './format-errors.js';

/** The sentence for `value` checked against `schema`, from the real compiled validator's errors. */
function sentenceFor(schema: TSchema, value: unknown, limit?: number, basePointer?: string): string {
  const checker = compileChecker(schema);
  expect(checker.check(value)).toBe(false);
  return describeErrors(checker.errors(value), limit, basePointer);
}

describe('formatPath', () => {
  it('writes a JSON pointer as the dotted path people read', () => {
    expect(formatPath('/messages/0/content/12/tool_use_id')).toBe('messages[0].content[12].tool_use_id');
  });

  it('names the root, and an index at the root', () => {
    expect(formatPath('')).toBe('(root)');
    expect(formatPath('/0/type')).toBe('[0].type');
  });

  it('unescapes ~1 and ~0 in a pointer segment', () => {
    expect(formatPath('/metadata/a~1b/c~0d')).toBe('metadata.a/b.c~d');
  });
});

describe('describeErrors', () => {
  const Request = Type.Object({
    model: Type.String(),
    max_tokens: Type.Integer({ minimum: 0 }),
    metadata: Type.Optional(Type.Object({ user_id: Type.Union([Type.String(), Type.Null()]) })),
  });

  it('reports a missing property at its own path, not at its parent', () => {
    expect(sentenceFor(Request, { max_tokens: 1 })).toBe('model: is required');
    expect(sentenceFor(Request, { model: 'm', max_tokens: 1, metadata: {} })).toBe(
      'metadata.user_id: is required',
    );
  });

  it('reports each missing property, up to the limit', () => {
    expect(sentenceFor(Request, {})).toBe('model: is required; max_tokens: is required');
    expect(sentenceFor(Request, {}, 1)).toBe('model: is required');
  });

  it('reports a wrong value with the constraint it breaks', () => {
    expect(sentenceFor(Request, { model: 'm', max_tokens: -1 })).toBe('max_tokens: must be >= 0');
    expect(sentenceFor(Request, { model: 'm', max_tokens: 1.5 })).toBe('max_tokens: must be integer');
  });

  it('lists the alternatives of a union the value matches none of', () => {
    const Role = Type.Object({
      role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]),
    });
    expect(sentenceFor(Role, { role: 'bot' })).toBe('role: must be one of "user", "assistant", "system"');
    expect(sentenceFor(Request, { model: 'm', max_tokens: 1, metadata: { user_id: 7 } })).toBe(
      'metadata.user_id: must be string or null',
    );
  });

  it('reports inside the branch whose outer shape the value has', () => {
    const System = Type.Object({
      system: Type.Union([
        Type.String(),
        Type.Array(Type.Object({ type: Type.String(), text: Type.String() })),
      ]),
    });
    expect(sentenceFor(System, { system: [{ type: 'text', text: 'a' }, { type: 'text' }] })).toBe(
      'system[1].text: is required',
    );
    expect(sentenceFor(System, { system: 5 })).toBe('system: must be string or array');
  });

  it('picks the branch of a union of objects whose fields are wrong, not the others', () => {
    const Event = Type.Object({
      delta: Type.Union([
        Type.Object({ type: Type.Literal('text_delta'), text: Type.String() }),
        Type.Object({ type: Type.Literal('input_json_delta'), partial_json: Type.String() }),
      ]),
    });
    expect(sentenceFor(Event, { delta: { type: 'text_delta', text: 5 } })).toBe('delta.text: must be string');
  });

  it('never reports inside a branch that rejected the type of the value', () => {
    const Item = Type.Object({
      item: Type.Union([
        Type.Object({ type: Type.Literal('a'), text: Type.String() }),
        Type.Object({ type: Type.Literal('b'), data: Type.String() }),
      ]),
    });
    expect(sentenceFor(Item, { item: { type: 'z', text: 'x' } })).toBe('item: has the wrong shape');
  });

  it('reports a union once even when the error list was cut short before its summary', () => {
    // Five object branches give more than the 8 errors TypeBox buffers, so the `anyOf` summary error
    // is not in the list: each branch's errors must still be folded into one finding.
    const branch = (type: string) => Type.Object({ type: Type.Literal(type), value: Type.String() });
    const Union = Type.Object({ item: Type.Union(['a', 'b', 'c', 'd', 'e'].map(branch)) });
    const checker = compileChecker(Union);
    const errors = checker.errors({ item: { type: 'z' } });
    expect(errors.some((error) => error.keyword === 'anyOf')).toBe(false);
    expect(describeErrors(errors)).toBe('item: has the wrong shape');
  });

  it('names a single allowed constant', () => {
    const Message = Type.Object({ type: Type.Literal('message') });
    expect(sentenceFor(Message, { type: 'msg' })).toBe('type: must be "message"');
  });

  it('puts the base pointer in front of every path', () => {
    const Block = Type.Object({ type: Type.Literal('tool_use'), id: Type.String() });
    expect(sentenceFor(Block, { type: 'tool_use' }, 1, '/messages/3/content/1')).toBe(
      'messages[3].content[1].id: is required',
    );
  });

  it('says each finding once', () => {
    const Pair = Type.Object({
      a: Type.Union([Type.String(), Type.Null()]),
    });
    const checker = compileChecker(Pair);
    const errors = checker.errors({ a: 1 });
    expect(describeErrors([...errors, ...errors])).toBe('a: must be string or null');
  });
});
