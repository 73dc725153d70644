/**
 * The one SSE frame encoder of the proxy. A frame is an `event:` line, `data:` lines and a blank line,
 * exactly as Anthropic frames its streams (docs/protocol.md A.7):
 *
 * ```text
 * event: content_block_delta
 * data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}
 *
 * ```
 *
 * An event name with a line break would let one frame forge another, so it is refused.
 *
 * @module
 */

/** CR or LF: the SSE line terminators (WHATWG HTML, "Parsing an event stream"). */
const LINE_BREAK = /[\r\n]/;
const LINE_BREAKS = /\r\n|\r|\n/;

function checkEventName(event: string): void {
  if (LINE_BREAK.test(event)) {
    throw new TypeError(`an SSE event name cannot contain a line break: ${JSON.stringify(event)}`);
  }
}

/**
 * Encodes one frame. Multi-line `data` becomes one `data:` line per line, so a client joins them back
 * with `\n`.
 *
 * @throws TypeError when `event` contains CR or LF.
 *
 * @example
 * encodeSseFrame('ping', '{"type":"ping"}') // → 'event: ping\ndata: {"type":"ping"}\n\n'
 * encodeSseFrame('note', 'a\nb')            // → 'event: note\ndata: a\ndata: b\n\n'
 */
export function encodeSseFrame(event: string, data: string): string {
  checkEventName(event);
  if (!LINE_BREAK.test(data)) return `event: ${event}\ndata: ${data}\n\n`;
  return `event: ${event}\ndata: ${data.split(LINE_BREAKS).join('\ndata: ')}\n\n`;
}

/**
 * Encodes a Messages stream event: its `type` is the event name, its JSON the data, with one
 * `JSON.stringify`. The data needs no line-break check: `JSON.stringify` escapes every control character,
 * so its output never contains CR or LF.
 *
 * @throws TypeError when `event.type` contains CR or LF.
 */
export function encodeSseEvent(event: { readonly type: string }): string {
  checkEventName(event.type);
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
