/**
 * Loop detection. A proxy whose upstream is itself — `ANTHROPIC_BASE_URL` exported for a client in the
 * shell that then starts the proxy — would forward each request to itself, which forwards it again,
 * without end. Two guards stop that:
 *
 * - every upstream request carries a hop header with this proxy's random instance id; a request that
 *   arrives carrying it has already passed through here and is answered at once (508), never forwarded;
 * - a base URL that is the proxy's own listening address is refused at start.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { TransportError } from '../errors.js';

/** The hop header: the instance ids of the `tpx` proxies a request has passed through. */
export const HOP_HEADER = 'tpx-hop';

/** A fresh instance id: random, so two proxies on one machine never share one. */
export function createInstanceId(): string {
  return randomBytes(9).toString('base64url');
}

/** Whether the request's hop header names `instanceId`. */
export function hasPassedThrough(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  instanceId: string,
): boolean {
  const value = headers[HOP_HEADER];
  if (value === undefined) return false;
  const text = Array.isArray(value) ? value.join(',') : value;
  return text.split(',').some((entry) => entry.trim() === instanceId);
}

/** The 508 answer for a request that came back around. */
export function loopError(url: string): TransportError {
  return new TransportError(
    'MODEL_EPROTO',
    `request loop: this request already passed through this proxy, so its upstream base URL points at this ` +
      `proxy (${url}). Unset ANTHROPIC_BASE_URL (and ANTHROPIC_API_KEY) in the shell that starts tpx, or set it ` +
      'to the real upstream',
    // Another try goes around the same loop: tell every client on the way back (the proxy that sent it
    // here, the SDK inside Claude Code) not to retry, as `x-should-retry` does for Anthropic's own answers.
    { status: 508, type: 'api_error', retryable: false, headers: { 'x-should-retry': 'false' } },
  );
}

function bareHost(host: string): string {
  const lower = host.toLowerCase();
  return lower.startsWith('[') && lower.endsWith(']') ? lower.slice(1, -1) : lower;
}

/** An IPv4-mapped 127/8 address as the URL parser writes it: `[::ffff:127.0.0.1]` becomes `::ffff:7f00:1`. */
const MAPPED_LOOPBACK_HEX = /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/;

/** Loopback names and addresses (a bare host, no brackets). */
function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host.startsWith('::ffff:127.') || MAPPED_LOOPBACK_HEX.test(host);
}

function isUnspecified(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '';
}

function ownAddresses(): Set<string> {
  const addresses = new Set<string>();
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) addresses.add(entry.address.toLowerCase());
  }
  return addresses;
}

/**
 * Whether `baseUrl` is the address the proxy listens on (`listenHost`:`listenPort`): same port, and a
 * host that reaches this listener (loopback names for a loopback or any-address listener, the machine's
 * own addresses for an any-address one, or the very host it was bound to).
 */
export function pointsAtListener(baseUrl: string, listenHost: string, listenPort: number): boolean {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return false;
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (port !== listenPort) return false;
  const target = bareHost(url.hostname);
  const listener = bareHost(listenHost);
  if (target === listener) return true;
  const listensOnLoopback = isLoopbackHost(listener);
  const listensEverywhere = isUnspecified(listener);
  if ((listensOnLoopback || listensEverywhere) && (isLoopbackHost(target) || isUnspecified(target)))
    return true;
  return listensEverywhere && ownAddresses().has(target);
}
