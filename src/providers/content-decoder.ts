/**
 * Undoing a response's `Content-Encoding`. Requests ask for `accept-encoding: identity`, but HTTP lets a
 * server compress anyway (RFC 9110 §12.5.3: identity is only a preference), and a proxy or CDN in front of
 * a model server may do so. `gzip`, `x-gzip`, `deflate` and `br` are decoded (and `zstd` where this
 * Node has a decoder); any other coding is `MODEL_EPROTO` naming it. A decoded body is bounded by the
 * response limit like any other.
 *
 * @module
 */
import * as zlib from 'node:zlib';
import type { Transform } from 'node:stream';
import { TransportError, type ProviderName } from '../errors.js';
import type { ResponseBody } from './response-body.js';
import { bodyTooLarge } from './response-too-large.js';

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

/**
 * Pipes a compressed body through its decoders into `body`, and returns where the raw bytes go. Decoded
 * bytes past `limits.maxResponseBytes` end the body (a small compressed answer can decode to gigabytes);
 * a body that cannot be decoded fails with `MODEL_EPROTO` naming its encoding.
 */
export function decodeInto(
  body: ResponseBody,
  decoders: Transform[],
  limits: { maxResponseBytes: number; provider: ProviderName },
  encoding: string,
  abort: (reason: Error) => void,
): Transform {
  for (let index = 1; index < decoders.length; index++) decoders[index - 1]!.pipe(decoders[index]!);
  const output = decoders.at(-1)!;
  let decodedBytes = 0;
  const fail = (error: TransportError) => {
    body.fail(error);
    abort(error);
    for (const decoder of decoders) decoder.destroy();
  };
  output.on('data', (chunk: Buffer) => {
    decodedBytes += chunk.length;
    if (decodedBytes > limits.maxResponseBytes) {
      fail(bodyTooLarge(limits.maxResponseBytes, limits.provider));
      return;
    }
    if (!body.push(chunk)) output.pause();
  });
  output.on('end', () => body.end());
  for (const decoder of decoders) {
    decoder.on('error', (error: Error) => {
      fail(
        new TransportError(
          'MODEL_EPROTO',
          `the ${limits.provider} response body could not be decoded as ${encoding}: ${error.message}`,
          { provider: limits.provider, cause: error },
        ),
      );
    });
  }
  return decoders[0]!;
}
