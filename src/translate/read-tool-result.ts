/**
 * A `tool_result` block → a wire-neutral tool result: the provider's call id, the error flag and the
 * content parts, in order (docs/translation.md). Pure.
 *
 * Neither wire has a field for `is_error: true`: each marks the content with {@link TOOL_ERROR_PREFIX}.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import { blockPath, type PositionedBlock } from './check-pairing.js';
import { invalidRequest } from './invalid-request.js';
import { mapDocumentBlock, mapImageSource, mapSearchResultBlock } from './map-document-block.js';
import type { ContentPart, ToolResult } from './neutral-request.js';
import type { RequestWire } from './request-wire.js';
import { decodeToolId } from './tool-id-codec.js';

/** Prefix marking the content of a `tool_result` with `is_error: true`. */
export const TOOL_ERROR_PREFIX = '[tool error] ';

/**
 * One `tool_result` as a tool result: a string content is one text part, no content none.
 *
 * @throws TransportError `MODEL_EINVAL` for content that is not a string or a list of blocks, or a block
 *   in it that the wire cannot carry.
 */
export function readToolResult(positioned: PositionedBlock, wire: RequestWire): ToolResult {
  // Only the block's `type` was validated: every other field is read as unknown.
  const block = positioned.block as Record<string, unknown>;
  return {
    callId: decodeToolId(String(block['tool_use_id'])),
    isError: block['is_error'] === true,
    parts: toolResultParts(block['content'], blockPath(positioned), wire),
  };
}

function toolResultParts(content: unknown, path: string, wire: RequestWire): ContentPart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) invalidRequest(`${path}.content must be a string or an array of blocks`);
  return content.flatMap((inner: unknown, index): ContentPart[] => {
    const innerPath = `${path}.content[${index}]`;
    if (!isObject(inner)) invalidRequest(`${innerPath} must be a content block`);
    switch (inner['type']) {
      case 'text':
        return [{ type: 'text', text: String(inner['text']) }];
      case 'image':
        return [mapImageSource(inner['source'], innerPath)];
      case 'document':
        return mapDocumentBlock(inner, innerPath, wire.documents);
      case 'search_result':
        return [mapSearchResultBlock(inner, innerPath)];
      default:
        return invalidRequest(
          `${innerPath}: a ${JSON.stringify(inner['type'])} block inside a tool_result cannot be translated ` +
            `to ${wire.name}; remove it, or use the anthropic provider`,
        );
    }
  });
}
