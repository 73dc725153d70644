import * as zlib from 'node:zlib';
import { gzipSync, deflateSync, brotliCompressSync } from 'node:zlib';
import type { Transform } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import { contentDecoders } from './content-decoder.js';

/** Runs `input` through `decoders` in order, as the HTTP client pipes them. */
async function decode(decoders: Transform[], input: Buffer): Promise<string> {
  for (let index = 1; index < decoders.length; index++) decoders[index - 1]!.pipe(decoders[index]!);
  const output = decoders.at(-1)!;
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    output.on('data', (chunk: Buffer) => chunks.push(chunk));
    output.on('end', resolve);
    for (const decoder of decoders) decoder.on('error', reject);
  });
  decoders[0]!.end(input);
  await done;
  return Buffer.concat(chunks).toString('utf8');
}

describe('contentDecoders', () => {
  it('needs no decoder for no encoding, identity, or empty codings', () => {
    expect(contentDecoders(undefined, 'tpx')).toEqual([]);
    expect(contentDecoders('identity', 'tpx')).toEqual([]);
    expect(contentDecoders(' IDENTITY , ,', 'tpx')).toEqual([]);
    expect(contentDecoders('', 'tpx')).toEqual([]);
  });

  it('decodes gzip, x-gzip, deflate and br, whatever their case and spacing', async () => {
    const text = 'a decoded answer';
    await expect(decode(contentDecoders('gzip', 'tpx'), gzipSync(text))).resolves.toBe(text);
    await expect(decode(contentDecoders(' X-Gzip ', 'tpx'), gzipSync(text))).resolves.toBe(text);
    await expect(decode(contentDecoders('Deflate', 'tpx'), deflateSync(text))).resolves.toBe(text);
    await expect(decode(contentDecoders('br', 'tpx'), brotliCompressSync(text))).resolves.toBe(text);
  });

  it('undoes several codings in the reverse of the order they were applied', async () => {
    const text = 'twice encoded';
    const encoded = brotliCompressSync(gzipSync(text)); // gzip first, then br
    const decoders = contentDecoders('gzip, identity, br', 'anthropic');
    expect(decoders).toHaveLength(2);
    await expect(decode(decoders, encoded)).resolves.toBe(text);
  });

  it('ends a truncated gzip stream with what was decoded', async () => {
    const whole = gzipSync('x'.repeat(4096));
    const decoded = await decode(contentDecoders('gzip', 'tpx'), whole.subarray(0, whole.length - 8));
    expect(decoded).toBe('x'.repeat(4096));
  });

  it('ends a truncated br stream with what was decoded', async () => {
    const text = Array.from({ length: 400 }, (_, index) => `line ${index}: ${(index * 7919) % 1000}`).join(
      '\n',
    );
    const whole = brotliCompressSync(text);
    const decoded = await decode(contentDecoders('br', 'tpx'), whole.subarray(0, whole.length - 4));
    expect(decoded.length).toBeGreaterThan(text.length / 2);
    expect(text.startsWith(decoded)).toBe(true);
  });

  it('decodes zstd where this Node.js has a decoder, and refuses it by name where it has none', async () => {
    const zstd = zlib as { zstdCompressSync?: (input: string) => Buffer; createZstdDecompress?: unknown };
    if (zstd.zstdCompressSync !== undefined && zstd.createZstdDecompress !== undefined) {
      await expect(decode(contentDecoders('zstd', 'tpx'), zstd.zstdCompressSync('zstd text'))).resolves.toBe(
        'zstd text',
      );
    } else {
      expect(() => contentDecoders('zstd', 'tpx')).toThrow(
        'the tpx endpoint answered with content-encoding "zstd", which this proxy cannot decode (it asks for identity and decodes gzip, deflate and br)',
      );
    }
  });

  it('refuses a coding it cannot decode with MODEL_EPROTO naming the coding and the provider', () => {
    let caught: unknown;
    try {
      contentDecoders('gzip, Compress', 'anthropic');
    } catch (error) {
      caught = error;
    }
    expect(isTransportError(caught)).toBe(true);
    expect(caught).toMatchObject({
      code: 'MODEL_EPROTO',
      status: 502,
      provider: 'anthropic',
      message:
        'the anthropic endpoint answered with content-encoding "compress", which this proxy cannot decode (it asks for identity and decodes gzip, deflate and br)',
    });
  });
});
