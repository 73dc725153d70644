/**
 * The inbound proxy-token check. A client presents the token the way Messages clients present a key:
 * `x-api-key: <token>` (classic) or `Authorization: Bearer <token>` (SDK ≥ 1.0) — docs/protocol.md A.0.
 *
 * Both sides are hashed with SHA-256 before `timingSafeEqual`, which needs equal lengths: comparing
 * digests takes the same time whatever the candidate's length or content, so the comparison leaks
 * neither the token's length nor a matching prefix.
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** `Bearer <credentials>`, scheme case-insensitive (RFC 9110 §11.1). */
const BEARER = /^bearer[ \t]+(.+)$/i;

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The credential a client presented in each header, when present. */
export function presentedCredentials(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): string[] {
  const found: string[] = [];
  const apiKey = single(headers['x-api-key']);
  if (apiKey !== undefined && apiKey !== '') found.push(apiKey.trim());
  const authorization = single(headers['authorization']);
  const bearer = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]?.trim();
  if (bearer !== undefined && bearer !== '') found.push(bearer);
  return found;
}

/**
 * Returns the check for one proxy token: `true` when the client presented it in `x-api-key` or as a
 * bearer token. Without a token every client passes.
 */
export function createProxyAuth(
  proxyToken: string | undefined,
): (headers: Readonly<Record<string, string | string[] | undefined>>) => boolean {
  if (proxyToken === undefined) return () => true;
  const expected = digest(proxyToken);
  return (headers) => {
    let matched = false;
    // Every candidate is compared, so the time taken does not say which header matched.
    for (const candidate of presentedCredentials(headers)) {
      if (timingSafeEqual(digest(candidate), expected)) matched = true;
    }
    return matched;
  };
}
