/**
 * Undoing a response's `Content-Encoding`. Requests ask for `accept-encoding: identity`, but HTTP lets a
 * server compress anyway (RFC 9110 §12.5.3: identity is only a preference), and a proxy or CDN in front of
 * a model server may do so. `gzip`, `x-gzip`, `deflate` and `br` are decoded (and `zstd` where this
 * Node has a decoder); any other coding is `MODEL_EPROTO` naming it.
 *
 * @module
 */
import * as zlib from 'node:zlib';
import type { Transform } from 'node:stream';
import { TransportError, type ProviderName } from '../errors.js';

type DecoderFactory = () => Transform;

/** Lets a truncated stream end with what was decoded, as browsers and curl do for streamed answers. */
const FLUSH = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };

function decoderFor(coding: string): DecoderFactory | undefined {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return () => zlib.createGunzip(FLUSH);
    case 'deflate':
      // RFC 9110 §8.4.1.2 means the zlib format; some servers send raw deflate: `createUnzip` cannot
      // tell those apart, but inflate with zlib headers is what every server we know sends.
      return () => zlib.createInflate(FLUSH);
    case 'br':
      return () =>
        zlib.createBrotliDecompress({
          flush: zlib.constants.BROTLI_OPERATION_FLUSH,
          finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
        });
    case 'zstd': {
      const create = (zlib as { createZstdDecompress?: () => Transform }).createZstdDecompress;
      return create === undefined ? undefined : () => create();
    }
    default:
      return undefined;
  }
}

/**
 * The decoders for a `content-encoding` value, in the order to apply them (the reverse of the order
 * the codings were applied in, RFC 9110 §8.4); an empty list for none or `identity`.
 *
 * @throws TransportError `MODEL_EPROTO` for a coding that cannot be decoded here.
 */
export function contentDecoders(contentEncoding: string | undefined, provider: ProviderName): Transform[] {
  if (contentEncoding === undefined) return [];
  const codings = contentEncoding
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const factories: DecoderFactory[] = [];
  for (const coding of codings) {
    const factory = decoderFor(coding);
    if (factory === undefined) {
      throw new TransportError(
        'MODEL_EPROTO',
        `the ${provider} endpoint answered with content-encoding ${JSON.stringify(coding)}, which this proxy cannot decode ` +
          '(it asks for identity and decodes gzip, deflate and br)',
        { provider },
      );
    }
    factories.push(factory);
  }
  return factories.reverse().map((create) => create());
}
