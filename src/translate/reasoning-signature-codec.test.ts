import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeReasoningSignature,
  encodeReasoningSignature,
  type ReasoningReference,
} from './reasoning-signature-codec.js';

/** Any UTF-16 string: code units drawn freely, so lone surrogates appear often. */
const codeUnitString = fc.string({
  unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
});

const optionalText = fc.option(fc.oneof(fc.string(), codeUnitString, fc.base64String()), { nil: undefined });

const reference: fc.Arbitrary<ReasoningReference> = fc.record({
  id: optionalText,
  encryptedContent: optionalText,
  source: fc.constantFrom('summary', 'content'),
});

const base64urlTail = fc.string({
  unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_='),
  maxLength: 60,
});

/** Strings that look like signatures: Anthropic's (base64), ours, ours altered. */
const signatureLooking = fc.oneof(
  fc.base64String({ minLength: 4 }),
  fc.string(),
  base64urlTail.map((tail) => `tpxr1.${tail}`),
  reference.map((value) => `${encodeReasoningSignature(value)}A`),
  reference.map((value) => encodeReasoningSignature(value).slice(0, -1)),
  reference.map((value) => `${encodeReasoningSignature(value)}=`),
  fc.jsonValue().map((value) => `tpxr1.${Buffer.from(JSON.stringify(value), 'utf8').toString('base64url')}`),
);

describe('reasoning signature codec', () => {
  it('restores every reasoning reference it encodes (decode ∘ encode = id)', () => {
    fc.assert(
      fc.property(reference, (value) => {
        expect(decodeReasoningSignature(encodeReasoningSignature(value))).toEqual(value);
      }),
      { numRuns: 2000 },
    );
  });

  it('never gives two references the same signature', () => {
    fc.assert(
      fc.property(reference, reference, (first, second) => {
        fc.pre(JSON.stringify(first) !== JSON.stringify(second));
        expect(encodeReasoningSignature(first)).not.toBe(encodeReasoningSignature(second));
      }),
      { numRuns: 2000 },
    );
  });

  it('decodes only its own exact output (encode ∘ decode = id where decode is defined)', () => {
    fc.assert(
      fc.property(signatureLooking, (signature) => {
        const decoded = decodeReasoningSignature(signature);
        if (decoded !== undefined) expect(encodeReasoningSignature(decoded)).toBe(signature);
      }),
      { numRuns: 3000 },
    );
  });

  it('does not take an Anthropic signature (base64, no dot) for one of its own', () => {
    const anthropicLike =
      'EqQBCkgIARABGAIiQL2FpPmzpn1zvCxYPqYsVm0MF2xX6+6v2bn1u2Sh7W0gUt7oc7a8uZdJ1vL4yyGI3W3vMgq5Ekb+PzQK9n6l4Ch8=';
    expect(decodeReasoningSignature(anthropicLike)).toBeUndefined();
    expect(decodeReasoningSignature('')).toBeUndefined();
    fc.assert(
      fc.property(fc.base64String(), (signature) => {
        expect(decodeReasoningSignature(signature)).toBeUndefined();
      }),
    );
  });

  it('encodes the documented example', () => {
    expect(encodeReasoningSignature({ id: 'rs_1', encryptedContent: 'gAAA', source: 'summary' })).toBe(
      'tpxr1.WyJzIiwicnNfMSIsImdBQUEiXQ',
    );
  });

  it('keeps a missing id and missing encrypted content apart from empty ones', () => {
    const missing = encodeReasoningSignature({
      id: undefined,
      encryptedContent: undefined,
      source: 'content',
    });
    const empty = encodeReasoningSignature({ id: '', encryptedContent: '', source: 'content' });
    expect(missing).not.toBe(empty);
    expect(decodeReasoningSignature(missing)).toEqual({
      id: undefined,
      encryptedContent: undefined,
      source: 'content',
    });
    expect(decodeReasoningSignature(empty)).toEqual({ id: '', encryptedContent: '', source: 'content' });
  });

  it('refuses a signature whose payload is not the three-field array', () => {
    const forge = (value: unknown) =>
      `tpxr1.${Buffer.from(JSON.stringify(value), 'utf8').toString('base64url')}`;
    expect(decodeReasoningSignature(forge(['s', 'rs_1']))).toBeUndefined();
    expect(decodeReasoningSignature(forge(['x', 'rs_1', null]))).toBeUndefined();
    expect(decodeReasoningSignature(forge(['s', 1, null]))).toBeUndefined();
    expect(decodeReasoningSignature(forge({ 0: 's' }))).toBeUndefined();
    expect(decodeReasoningSignature('tpxr1.not base64!')).toBeUndefined();
  });
});
