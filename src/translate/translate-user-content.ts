/**
 * The blocks of a user turn other than tool results → the content of one Chat Completions user message
 * (docs/translation.md). Pure.
 *
 * @module
 */
import type { ChatContentPart } from '../protocol/chat-completions.js';
import { blockPath, type PositionedBlock } from './check-pairing.js';
import type { DialectProfile } from './dialects.js';
import { invalidRequest, untranslatableBlock } from './invalid-request.js';
import { cacheControlOf, forwardsCacheControl } from './map-cache-control.js';
import { mapDocumentBlock, mapImageSource, mapSearchResultBlock } from './map-document-block.js';

/**
 * User blocks (tool results excluded) as user message content: a plain string for a single text without
 * `cache_control`, else content parts.
 *
 * @throws TransportError `MODEL_EINVAL` for a block a user message cannot carry.
 */
export function translateUserContent(
  blocks: readonly PositionedBlock[],
  dialect: DialectProfile | undefined,
): string | ChatContentPart[] {
  const forwardsCache = forwardsCacheControl(dialect);
  const parts = blocks.flatMap((positioned): ChatContentPart[] => {
    const { block } = positioned;
    switch (block.type) {
      case 'text': {
        const cacheControl = forwardsCache ? cacheControlOf(block) : undefined;
        const text = String(block['text']);
        return [
          cacheControl === undefined
            ? { type: 'text', text }
            : { type: 'text', text, cache_control: cacheControl },
        ];
      }
      case 'image':
        return [mapImageSource(block['source'], blockPath(positioned))];
      case 'document':
        return mapDocumentBlock(block, blockPath(positioned), dialect);
      case 'search_result':
        return [mapSearchResultBlock(block, blockPath(positioned))];
      case 'tool_use':
      case 'thinking':
      case 'redacted_thinking':
        return invalidRequest(
          `${blockPath(positioned)}: ${block.type} blocks belong in assistant messages, not user messages`,
        );
      default:
        return untranslatableBlock(positioned);
    }
  });
  const [only] = parts;
  if (parts.length === 1 && only !== undefined && only.type === 'text' && only.cache_control === undefined) {
    return only.text;
  }
  return parts.length === 0 ? '' : parts;
}
