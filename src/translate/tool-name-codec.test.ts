import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import { createToolNameMap, encodeToolName } from './tool-name-codec.js';

const UPSTREAM_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function hash16(name: string): string {
  return createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 16);
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** Messages tool names: `^[a-zA-Z0-9_-]{1,128}$`, long ones often. */
const messagesName = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/),
  fc.stringMatching(/^[a-zA-Z0-9_-]{65,128}$/),
);

describe('encodeToolName', () => {
  it('passes a valid name of at most 64 characters through unchanged', () => {
    expect(encodeToolName('get_weather')).toBe('get_weather');
    expect(encodeToolName('a'.repeat(64))).toBe('a'.repeat(64));
  });

  it('encodes a name longer than 64 characters as 40 safe characters, "_h" and 16 hex of its sha256', () => {
    const name = `mcp__${'x'.repeat(70)}__tool`;
    expect(encodeToolName(name)).toBe(`${name.slice(0, 40)}_h${hash16(name)}`);
  });

  it('leaves characters outside [a-zA-Z0-9_-] out of the readable prefix', () => {
    expect(encodeToolName('read.file')).toBe(`readfile_h${hash16('read.file')}`);
    expect(encodeToolName('outil·é')).toBe(`outil_h${hash16('outil·é')}`);
    expect(encodeToolName('')).toBe(`_h${hash16('')}`);
  });

  it('always gives a valid, deterministic function name', () => {
    fc.assert(
      fc.property(fc.oneof(messagesName, fc.string({ unit: 'binary', maxLength: 200 })), (name) => {
        const encoded = encodeToolName(name);
        expect(encoded).toMatch(UPSTREAM_NAME);
        expect(encodeToolName(name)).toBe(encoded);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('createToolNameMap', () => {
  it('maps every offered tool name there and back', () => {
    const long = 'l'.repeat(128);
    const map = createToolNameMap([{ name: 'short' }, { name: long }]);
    expect(map.toUpstream('short')).toBe('short');
    expect(map.toUpstream(long)).toBe(`${'l'.repeat(40)}_h${hash16(long)}`);
    expect(map.fromUpstream(map.toUpstream(long))).toBe(long);
    expect(map.fromUpstream('short')).toBe('short');
  });

  it('returns an upstream name no tool maps to unchanged', () => {
    const map = createToolNameMap([{ name: 'a' }]);
    expect(map.fromUpstream('not_offered')).toBe('not_offered');
    expect(createToolNameMap(undefined).fromUpstream('x')).toBe('x');
  });

  it('encodes a name that is not among the tools (history only) the same deterministic way', () => {
    const long = 'h'.repeat(100);
    expect(createToolNameMap([]).toUpstream(long)).toBe(encodeToolName(long));
    expect(createToolNameMap(undefined).toUpstream('plain')).toBe('plain');
  });

  it('refuses two tools with the same name', () => {
    const error = thrown(() => createToolNameMap([{ name: 'dup' }, { name: 'other' }, { name: 'dup' }]));
    expect(isTransportError(error) && error.code).toBe('MODEL_EINVAL');
    expect((error as Error).message).toBe(
      'tools[0] and tools[2] are both named "dup"; tool names must be unique',
    );
  });

  it('refuses an unchanged name that collides with the encoded form of another name', () => {
    const long = 'z'.repeat(80);
    const encoded = encodeToolName(long);
    const error = thrown(() => createToolNameMap([{ name: long }, { name: encoded }]));
    expect(isTransportError(error) && error.code).toBe('MODEL_EINVAL');
    expect((error as Error).message).toBe(
      `tools[0] (${JSON.stringify(long)}) and tools[1] (${JSON.stringify(encoded)}) would both be sent to the ` +
        `provider as the function name ${JSON.stringify(encoded)}; rename one of them`,
    );
  });

  it('is a bijection on any set of distinct Messages names', () => {
    fc.assert(
      fc.property(fc.uniqueArray(messagesName, { maxLength: 20 }), (names) => {
        const map = createToolNameMap(names.map((name) => ({ name })));
        const upstream = names.map((name) => map.toUpstream(name));
        expect(new Set(upstream).size).toBe(names.length);
        upstream.forEach((name, index) => {
          expect(name).toMatch(UPSTREAM_NAME);
          expect(map.fromUpstream(name)).toBe(names[index]);
        });
      }),
      { numRuns: 500 },
    );
  });
});
