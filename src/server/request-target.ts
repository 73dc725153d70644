/**
 * The request target of an HTTP/1.1 request line, in any of its forms (RFC 9112 §3.2): origin-form
 * (`/v1/messages?beta=true`), absolute-form (`http://127.0.0.1:8787/v1/messages`, what a client sends
 * when it believes it talks to a forward proxy) and asterisk-form (`*`).
 *
 * @module
 */

/** A request target split into what the router and the host check need. */
export interface RequestTarget {
  /** The path, always starting with `/` (or `*` for the asterisk-form). */
  path: string;
  /** The query string without `?`, or `''`. */
  query: string;
  /**
   * The authority of an absolute-form target (`127.0.0.1:8787`). A server must use it instead of the
   * `Host` header when it is present (RFC 9112 §3.2.2).
   */
  authority: string | undefined;
}

/** `scheme://` at the start of an absolute-form target (RFC 3986 §3.1). */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Splits a request target into path, query and, for the absolute-form, authority. */
export function parseRequestTarget(target: string): RequestTarget {
  let authority: string | undefined;
  let rest = target;
  const scheme = SCHEME.exec(target);
  if (scheme !== null) {
    const start = scheme[0].length;
    let end = start;
    while (end < target.length && target[end] !== '/' && target[end] !== '?' && target[end] !== '#') end++;
    authority = target.slice(start, end);
    rest = target.slice(end);
    if (!rest.startsWith('/')) rest = `/${rest}`;
  }
  const fragment = rest.indexOf('#');
  if (fragment !== -1) rest = rest.slice(0, fragment);
  const mark = rest.indexOf('?');
  const path = mark === -1 ? rest : rest.slice(0, mark);
  const query = mark === -1 ? '' : rest.slice(mark + 1);
  return { path, query, authority };
}
