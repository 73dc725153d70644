/**
 * The mock model's bearer-token check, in constant time.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The sha256 digest of `text`: what the server keeps of the expected `Authorization` value. */
export function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares digests rather than strings so that the comparison takes the same time whatever the input. */
export function isAuthorized(authorization: string | undefined, expectedDigest: Buffer): boolean {
  return authorization !== undefined && timingSafeEqual(digest(authorization), expectedDigest);
}
