/**
 * The blocks of a user turn other than tool results → wire-neutral content parts (docs/translation.md).
 * Pure.
 *
 * @module
 */
import { blockPath, type PositionedBlock } from './check-pairing.js';
import { invalidRequest, untranslatableBlock } from './invalid-request.js';
import { cacheControlOf } from './map-cache-control.js';
import { mapDocumentBlock, mapImageSource, mapSearchResultBlock } from './map-document-block.js';
import type { ContentPart } from './neutral-request.js';
import type { RequestWire } from './request-wire.js';

/**
 * User blocks (tool results excluded) as content parts, in order: text (with its `cache_control` where
 * the wire forwards it), images, documents and search results.
 *
 * @throws TransportError `MODEL_EINVAL` for a block a user message cannot carry.
 */
export function readUserContent(blocks: readonly PositionedBlock[], wire: RequestWire): ContentPart[] {
  return blocks.flatMap((positioned): ContentPart[] => {
    const { block } = positioned;
    switch (block.type) {
      case 'text': {
        const cacheControl = wire.forwardsCacheControl ? cacheControlOf(block) : undefined;
        const text = String(block['text']);
        return [cacheControl === undefined ? { type: 'text', text } : { type: 'text', text, cacheControl }];
      }
      case 'image':
        return [mapImageSource(block['source'], blockPath(positioned))];
      case 'document':
        return mapDocumentBlock(block, blockPath(positioned), wire.documents);
      case 'search_result':
        return [mapSearchResultBlock(block, blockPath(positioned))];
      case 'tool_use':
      case 'thinking':
      case 'redacted_thinking':
        return invalidRequest(
          `${blockPath(positioned)}: ${block.type} blocks belong in assistant messages, not user messages`,
        );
      default:
        return untranslatableBlock(positioned, wire.name);
    }
  });
}
