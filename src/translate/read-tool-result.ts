/**
 * A `tool_result` block → a wire-neutral tool result: the provider's call id, the error flag and the
 * content parts, in order (docs/translation.md). Pure.
 *
 * Neither wire has a field for `is_error: true`: each marks the content with {@link TOOL_ERROR_PREFIX}.
 *
 * A `tool_reference` block (Claude Code's ToolSearch answer, `{"type":"tool_reference","tool_name":…}`)
 * asks Anthropic to load a deferred tool's definition. Upstream every offered tool is sent in full
 * (`defer_loading` is dropped), so all the model needs is which tool was found: the block becomes the
 * text {@link TOOL_REFERENCE_PREFIX} + the tool's function name as sent upstream.
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
import type { ToolNameMap } from './tool-name-codec.js';

/** Prefix marking the content of a `tool_result` with `is_error: true`. */
export const TOOL_ERROR_PREFIX = '[tool error] ';

/** What a `tool_reference` block's text starts with, before the tool's upstream function name. */
export const TOOL_REFERENCE_PREFIX = 'Tool available: ';

/** A `tool_reference.tool_name` as the Messages API accepts it (docs/protocol.md A.2). */
const REFERENCED_TOOL_NAME = /^[a-zA-Z0-9_-]{1,256}$/;

/**
 * One `tool_result` as a tool result: a string content is one text part, no content none.
 *
 * @throws TransportError `MODEL_EINVAL` for content that is not a string or a list of blocks, or a block
 *   in it that the wire cannot carry.
 */
export function readToolResult(
  positioned: PositionedBlock,
  toolNames: ToolNameMap,
  wire: RequestWire,
): ToolResult {
  // Only the block's `type` was validated: every other field is read as unknown.
  const block = positioned.block as Record<string, unknown>;
  return {
    callId: decodeToolId(String(block['tool_use_id'])),
    isError: block['is_error'] === true,
    parts: toolResultParts(block['content'], blockPath(positioned), toolNames, wire),
  };
}

function toolResultParts(
  content: unknown,
  path: string,
  toolNames: ToolNameMap,
  wire: RequestWire,
): ContentPart[] {
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
      case 'tool_reference':
        return [toolReferenceText(inner, innerPath, toolNames)];
      default:
        return invalidRequest(
          `${innerPath}: a ${JSON.stringify(inner['type'])} block inside a tool_result cannot be translated ` +
            `to ${wire.name}; remove it, or use the anthropic provider`,
        );
    }
  });
}

/**
 * A `tool_reference` block as text naming the tool the way the upstream knows it: through the request's
 * tool-name map, so a name too long for a function name is given in the form the tool was sent under.
 * `cache_control` on the block is dropped, as on the other parts of a tool result.
 *
 * @throws TransportError `MODEL_EINVAL` when `tool_name` is not a name the Messages API accepts.
 */
function toolReferenceText(
  block: Record<string, unknown>,
  path: string,
  toolNames: ToolNameMap,
): ContentPart {
  const name = block['tool_name'];
  if (typeof name !== 'string' || !REFERENCED_TOOL_NAME.test(name)) {
    const shown = typeof name === 'string' && name.length > 100 ? `${name.slice(0, 100)}…` : name;
    invalidRequest(
      `${path}.tool_name must be a tool name of 1 to 256 characters from [a-zA-Z0-9_-], got ` +
        (shown === undefined ? 'nothing' : JSON.stringify(shown)),
    );
  }
  return { type: 'text', text: `${TOOL_REFERENCE_PREFIX}${toolNames.toUpstream(name)}` };
}
