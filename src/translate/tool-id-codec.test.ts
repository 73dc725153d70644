import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_PLAIN_ID_LENGTH,
  createToolIdIssuer,
  decodeToolId,
  encodeToolId,
  encodeToolIds,
  isValidMessagesToolId,
} from './tool-id-codec.js';

const VALID_ID = /^[A-Za-z0-9_-]+$/;

/** A generator of fresh ids, as the codec requires (`[A-Za-z0-9_-]+`, a new one per call). */
function counterGenerator(): () => string {
  let count = 0;
  return () => `gen${++count}`;
}

/** Any UTF-16 string: code units drawn freely, so lone surrogates appear often. */
const codeUnitString = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
  minLength: 1,
});

const base64urlTail = fc.string({
  unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'),
  maxLength: 24,
});

/** Strings that look like this codec's own output, or almost. */
const encodedLooking = fc
  .tuple(
    fc.constantFrom('tpx_', 'tpx_e', 'tpx_u', 'tpx_d2e', 'tpx_d10e', 'tpx_d1e', 'tpx_d2u', 'tpx_g', 'tpx_d'),
    base64urlTail,
  )
  .map(([prefix, tail]) => prefix + tail);

/** Provider ids of every kind: valid, invalid, unicode, lone surrogates, too long, encoded-looking. */
const providerId = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1 }),
  codeUnitString,
  fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/),
  fc.stringMatching(/^[A-Za-z0-9_-]{190,230}$/),
  encodedLooking,
  fc.string({ unit: 'binary', minLength: 1 }).map((id) => encodeToolId(id, 1, () => 'x')),
  fc.string({ unit: 'binary', minLength: 1 }).map((id) => encodeToolId(id, 2, () => 'x')),
);

const occurrence = fc.integer({ min: 1, max: 1_000_000 });

const noId = (): string => {
  throw new Error('no id is generated here');
};

describe('encodeToolId / decodeToolId', () => {
  it('passes a valid provider id through unchanged at its first occurrence', () => {
    expect(encodeToolId('call_abc', 1, counterGenerator())).toBe('call_abc');
    expect(decodeToolId('call_abc')).toBe('call_abc');
  });

  it('encodes ids with characters outside [A-Za-z0-9_-] (the documented example)', () => {
    expect(encodeToolId('functions.read:0', 1, counterGenerator())).toBe('tpx_eZnVuY3Rpb25zLnJlYWQ6MA');
    expect(decodeToolId('tpx_eZnVuY3Rpb25zLnJlYWQ6MA')).toBe('functions.read:0');
  });

  it('encodes a repeated id with its occurrence number, and sends the repeat back under that id', () => {
    expect(encodeToolId('call_abc', 2, counterGenerator())).toBe('tpx_d2eY2FsbF9hYmM');
    expect(decodeToolId('tpx_d2eY2FsbF9hYmM')).toBe('tpx_d2eY2FsbF9hYmM');
  });

  it('encodes valid ids longer than the pass-through limit', () => {
    const long = 'a'.repeat(MAX_PLAIN_ID_LENGTH + 1);
    const encoded = encodeToolId(long, 1, counterGenerator());
    expect(encoded).not.toBe(long);
    expect(decodeToolId(encoded)).toBe(long);
    expect(encodeToolId('a'.repeat(MAX_PLAIN_ID_LENGTH), 1, counterGenerator())).toBe(
      'a'.repeat(MAX_PLAIN_ID_LENGTH),
    );
  });

  it('encodes a valid id that already starts with the reserved prefix', () => {
    const encoded = encodeToolId('tpx_eAAAA', 1, counterGenerator());
    expect(encoded).not.toBe('tpx_eAAAA');
    expect(decodeToolId(encoded)).toBe('tpx_eAAAA');
  });

  it('encodes a string with a lone surrogate as UTF-16 and decodes it exactly', () => {
    const id = 'call\uD800x';
    const encoded = encodeToolId(id, 1, counterGenerator());
    expect(encoded.startsWith('tpx_u')).toBe(true);
    expect(decodeToolId(encoded)).toBe(id);
    expect(encodeToolId('\uDC00', 5, counterGenerator())).toBe(
      `tpx_d5u${Buffer.from('\uDC00', 'utf16le').toString('base64url')}`,
    );
  });

  it('generates an id for a missing or empty provider id, and decodes it to itself', () => {
    const generate = counterGenerator();
    expect(encodeToolId(undefined, 1, generate)).toBe('tpx_ggen1');
    expect(encodeToolId(null, 1, generate)).toBe('tpx_ggen2');
    expect(encodeToolId('', 3, generate)).toBe('tpx_ggen3');
    expect(decodeToolId('tpx_ggen3')).toBe('tpx_ggen3');
  });

  it('decodes ids it did not produce to themselves', () => {
    for (const id of [
      'toolu_01A',
      'tpx_',
      'tpx_e',
      'tpx_d1eYQ',
      'tpx_d02eYQ',
      'tpx_eYQ=',
      'tpx_xYQ',
      'tpx_uYQ',
      'tpx_edA', // 't' encoded, but 't' passes through unchanged, so the codec never writes this
      'abcdeLg', // outside the namespace, though its tail is the payload of '.'
      'tpx_dZeLjd2eA', // no occurrence number after the d, though 'd2' followed by a payload comes later
      'tpx_d2eY2FsbF9hYmM', // a repeat of call_abc: its own wire id
    ]) {
      expect(decodeToolId(id)).toBe(id);
    }
  });

  it('decodes any id it could not have produced to itself, and any other only to what encodes back to it', () => {
    // Mangled payloads: a non-canonical base64url tail, an odd UTF-16 byte count, a bad occurrence
    // number, a tag other than e/u/d/g, characters outside [A-Za-z0-9_-].
    const mangled = fc
      .tuple(
        fc.constantFrom(
          'tpx_',
          'tpx_e',
          'tpx_u',
          'tpx_d',
          'tpx_d0e',
          'tpx_d01e',
          'tpx_d1e',
          'tpx_d2',
          'tpx_x',
          'TPX_e',
        ),
        fc.oneof(base64urlTail, codeUnitString),
        fc.constantFrom('', '=', '.', 'A', 'AA', '-'),
      )
      .map(([prefix, tail, suffix]) => prefix + tail + suffix);
    // `tpx_e` + the payload of an id that passes through unchanged: well-formed, but never written.
    const unwritten = fc
      .stringMatching(/^[A-Za-z0-9_-]{1,12}$/)
      .map((id) => `tpx_e${Buffer.from(id, 'utf8').toString('base64url')}`);
    fc.assert(
      fc.property(fc.oneof(mangled, unwritten, providerId, codeUnitString), (id) => {
        const decoded = decodeToolId(id);
        if (decoded === id) return;
        expect(encodeToolId(decoded, 1, () => 'x')).toBe(id);
      }),
      { numRuns: 2_000 },
    );
  });

  it('round-trips any provider id at its first occurrence, lone surrogates included', () => {
    fc.assert(
      fc.property(providerId, (id) => {
        expect(decodeToolId(encodeToolId(id, 1, counterGenerator()))).toBe(id);
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips strings made of arbitrary UTF-16 code units at their first occurrence', () => {
    fc.assert(
      fc.property(codeUnitString, (id) => {
        expect(decodeToolId(encodeToolId(id, 1, counterGenerator()))).toBe(id);
      }),
      { numRuns: 2000 },
    );
  });

  it('decodes any repeat to itself, so it goes back under an id of its own', () => {
    fc.assert(
      fc.property(fc.oneof(providerId, codeUnitString), fc.integer({ min: 2, max: 1_000_000 }), (id, n) => {
        const encoded = encodeToolId(id, n, counterGenerator());
        expect(decodeToolId(encoded)).toBe(encoded);
      }),
      { numRuns: 2000 },
    );
  });

  it('always produces a valid Messages tool id', () => {
    fc.assert(
      fc.property(fc.option(providerId, { nil: undefined }), occurrence, (id, n) => {
        const encoded = encodeToolId(id, n, counterGenerator());
        expect(encoded).toMatch(VALID_ID);
        expect(isValidMessagesToolId(encoded)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('never maps two distinct (id, occurrence) inputs to the same output, encoded-looking ids included', () => {
    fc.assert(
      fc.property(providerId, occurrence, providerId, occurrence, (a, n, b, m) => {
        fc.pre(a !== b || n !== m);
        const generate = counterGenerator();
        expect(encodeToolId(a, n, generate)).not.toBe(encodeToolId(b, m, generate));
      }),
      { numRuns: 3000 },
    );
  });

  it('never collides across a large set of distinct inputs', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(providerId, fc.integer({ min: 1, max: 4 })), {
          selector: ([id, n]) => `${n}\u0000${id}`,
          maxLength: 60,
        }),
        (inputs) => {
          const generate = counterGenerator();
          const outputs = inputs.map(([id, n]) => encodeToolId(id, n, generate));
          expect(new Set(outputs).size).toBe(inputs.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('encodeToolIds', () => {
  it('gives distinct caller ids to repeated and missing provider ids', () => {
    expect(encodeToolIds(['call_1', 'call_1', '', undefined, null, 'call_1'], counterGenerator())).toEqual([
      'call_1',
      'tpx_d2eY2FsbF8x',
      'tpx_ggen1',
      'tpx_ggen2',
      'tpx_ggen3',
      'tpx_d3eY2FsbF8x',
    ]);
  });

  it('gives a call a further occurrence when an earlier call holds the wire id its own would have', () => {
    // The provider emitted, as ids of its own, the wire id a second call_0 gets and the id the first
    // call without an id would be given.
    expect(
      encodeToolIds(['call_0', 'tpx_d2eY2FsbF8w', 'call_0', 'tpx_ggen1', undefined], counterGenerator()),
    ).toEqual([
      'call_0',
      encodeToolId('tpx_d2eY2FsbF8w', 1, noId),
      'tpx_d3eY2FsbF8w',
      encodeToolId('tpx_ggen1', 1, noId),
      'tpx_ggen2',
    ]);
    expect(encodeToolIds(['call_0', 'call_0', 'tpx_d2eY2FsbF8w'], counterGenerator())).toEqual([
      'call_0',
      'tpx_d2eY2FsbF8w',
      encodeToolId('tpx_d2eY2FsbF8w', 2, noId),
    ]);
  });

  it('numbers the calls of a stream, one at a time, as a whole answer', () => {
    const issue = createToolIdIssuer(counterGenerator());
    expect(['a', 'a', null, 'a'].map((id) => issue(id))).toEqual(
      encodeToolIds(['a', 'a', null, 'a'], counterGenerator()),
    );
  });

  it('returns distinct, valid ids with distinct wire ids, first occurrences sent back as given, for any array', () => {
    const item = fc.oneof(
      providerId,
      fc.constantFrom('', 'call_0', 'tpx_eYQ', 'a'),
      fc.constant(undefined),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 30 }), (ids) => {
        const encoded = encodeToolIds(ids, counterGenerator());
        expect(encoded).toHaveLength(ids.length);
        expect(new Set(encoded).size).toBe(ids.length);
        expect(new Set(encoded.map(decodeToolId)).size).toBe(ids.length);
        encoded.forEach((caller, index) => {
          expect(caller).toMatch(VALID_ID);
          const original = ids[index];
          const isFirst = ids.indexOf(original) === index;
          const wireIdsBefore = encoded.slice(0, index).map(decodeToolId);
          if (original !== undefined && original !== null && original !== '' && isFirst) {
            if (!wireIdsBefore.includes(original)) expect(decodeToolId(caller)).toBe(original);
          }
        });
      }),
      { numRuns: 1000 },
    );
  });
});
