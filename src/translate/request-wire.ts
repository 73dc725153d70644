/**
 * What the Messages-side front end (`prepareRequest`) needs to know of the wire it prepares a request
 * for: what that wire's server takes where the wires differ (cache markers, files), and how refusals name
 * the wire. Each wire says it once: `chatRequestWire` (`chat-request-wire.ts`) and
 * `RESPONSES_REQUEST_WIRE` (`encode-responses-request.ts`). Pure data.
 *
 * @module
 */
import type { DocumentTarget } from './map-document-block.js';

/** The facts about one wire that reading a Messages request depends on. */
export interface RequestWire {
  /** The wire, as refusals name it: `… cannot be translated to Chat Completions`. */
  readonly name: string;
  /** What cannot continue a prefill, as its refusal says: `OpenAI-compatible servers`. */
  readonly prefillRefuser: string;
  /** Why a server tool is refused, after `tools[i] ("name") has type "t": `. */
  readonly serverToolRefusal: string;
  /** The refusal of an image or a document block in an assistant message, after the block's path. */
  assistantMediaRefusal(type: 'image' | 'document'): string;
  /** What the output-format refusal ends with: `a Chat Completions equivalent (response_format)`. */
  readonly outputFormatEquivalent: string;
  /** Whether `cache_control` markers go upstream: kept on text parts, the system prompt and the request. */
  readonly forwardsCacheControl: boolean;
  /** What the server takes of documents. */
  readonly documents: DocumentTarget;
}
