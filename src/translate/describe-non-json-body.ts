/**
 * The message for an upstream error answer whose body is not JSON: an HTML page from a wrong base URL, a
 * proxy's plain-text page, nothing at all.
 *
 * @module
 */
import { EXCERPT_LENGTH, collapse, excerpt, truncate } from './quote-upstream-text.js';

const REASON_PHRASES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  529: 'Overloaded',
};

/**
 * The message for a non-JSON error body, and the text to classify it by: the page's `<title>`, or the
 * first 200 characters of its text with the tags stripped.
 */
export function describeNonJsonBody(
  status: number,
  bodyText: string,
  contentType: string | undefined,
): { message: string; text: string } {
  const statusText = `${status} ${reasonPhrase(status)}`.trimEnd();
  const trimmed = bodyText.trim();
  if (trimmed === '') return { message: `upstream answered ${statusText} with an empty body`, text: '' };
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const looksLikeHtml = mediaType.includes('html') || /^<(!doctype|html|head|body|title)\b/i.test(trimmed);
  const text = looksLikeHtml ? htmlSummary(trimmed) : excerpt(trimmed);
  let message: string;
  if (mediaType.includes('json')) {
    message = `upstream answered ${statusText} with ${article(mediaType)} ${mediaType} body that is not valid JSON (${text})`;
  } else {
    const shown = mediaType !== '' ? mediaType : looksLikeHtml ? 'HTML' : 'non-JSON';
    const hint = looksLikeHtml || status === 404 || status === 405 ? ' — is the base URL right?' : '';
    message = `upstream answered ${statusText} with ${article(shown)} ${shown} body, not JSON${hint} (${text})`;
  }
  return { message, text };
}

/** The page's `<title>`, else its text with scripts, styles and tags removed; at most 200 characters. */
function htmlSummary(html: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  if (title !== undefined) {
    const cleaned = collapse(decodeEntities(title.replace(/<[^>]*>/g, ' ')));
    if (cleaned !== '') return truncate(cleaned, EXCERPT_LENGTH);
  }
  const text = html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]*>/g, ' ');
  return truncate(collapse(decodeEntities(text)), EXCERPT_LENGTH);
}

function decodeEntities(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
}

/** "a" or "an" before a media type or "HTML" (said "aitch"). */
function article(word: string): string {
  return /^([aeiou]|html)/i.test(word) ? 'an' : 'a';
}

/** The reason phrase of a status, or `''` for one without a known phrase. */
export function reasonPhrase(status: number): string {
  return REASON_PHRASES[status] ?? '';
}
