/**
 * `tool_result` blocks → Chat Completions tool messages, plus one user message for the images and files
 * tool messages cannot hold (docs/translation.md). Pure.
 *
 * `is_error: true` has no Chat Completions field: the content gets the prefix {@link TOOL_ERROR_PREFIX}.
 *
 * @module
 */
import { isObject as isRecord } from '../protocol/is-object.js';
import type { ChatContentPart, ChatMessage } from '../protocol/chat-completions.js';
import { blockPath, type PositionedBlock } from './check-pairing.js';
import type { DialectProfile } from './dialects.js';
import { invalidRequest } from './invalid-request.js';
import {
  isTextPart,
  mapDocumentBlock,
  mapImageSource,
  mapSearchResultBlock,
  type DocumentPart,
} from './map-document-block.js';
import { decodeToolId } from './tool-id-codec.js';

/** Prefix marking the content of a `tool_result` with `is_error: true`. */
export const TOOL_ERROR_PREFIX = '[tool error] ';

/** Reads a field of a content block without trusting its type: blocks are only checked for `type`. */
function field(block: object, key: string): unknown {
  return (block as Record<string, unknown>)[key];
}

/**
 * One tool message per `tool_result`, in order; then, when any result carried images or files (which
 * tool messages cannot hold), one user message with them, each group introduced by a text part naming
 * its tool call.
 */
export function translateToolResults(
  results: readonly PositionedBlock[],
  dialect: DialectProfile | undefined,
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const attachmentParts: ChatContentPart[] = [];
  for (const positioned of results) {
    const { block } = positioned;
    const toolCallId = decodeToolId(String(field(block, 'tool_use_id')));
    const { text, attachments } = toolResultContent(field(block, 'content'), blockPath(positioned), dialect);
    const content = field(block, 'is_error') === true ? `${TOOL_ERROR_PREFIX}${text}` : text;
    messages.push({ role: 'tool', tool_call_id: toolCallId, content });
    if (attachments.length > 0) {
      const what = attachments.every((part) => part.type === 'image_url') ? 'Images' : 'Files';
      attachmentParts.push(
        { type: 'text', text: `${what} from the result of tool call ${toolCallId}:` },
        ...attachments,
      );
    }
  }
  if (attachmentParts.length > 0) messages.push({ role: 'user', content: attachmentParts });
  return messages;
}

function toolResultContent(
  content: unknown,
  path: string,
  dialect: DialectProfile | undefined,
): { text: string; attachments: DocumentPart[] } {
  if (content === undefined || content === null) return { text: '', attachments: [] };
  if (typeof content === 'string') return { text: content, attachments: [] };
  if (!Array.isArray(content)) invalidRequest(`${path}.content must be a string or an array of blocks`);
  const texts: string[] = [];
  const attachments: DocumentPart[] = [];
  content.forEach((inner: unknown, index) => {
    const innerPath = `${path}.content[${index}]`;
    const type = isRecord(inner) ? inner['type'] : undefined;
    if (!isRecord(inner)) invalidRequest(`${innerPath} must be a content block`);
    switch (type) {
      case 'text':
        texts.push(String(inner['text']));
        break;
      case 'image':
        attachments.push(mapImageSource(inner['source'], innerPath));
        break;
      case 'document':
        // Text goes into the tool message; images and files follow in a user message.
        for (const part of mapDocumentBlock(inner, innerPath, dialect)) {
          if (isTextPart(part)) texts.push(part.text);
          else attachments.push(part);
        }
        break;
      case 'search_result':
        texts.push(mapSearchResultBlock(inner, innerPath).text);
        break;
      default:
        invalidRequest(
          `${innerPath}: a ${JSON.stringify(type)} block inside a tool_result cannot be translated to Chat ` +
            'Completions; remove it, or use the anthropic provider',
        );
    }
  });
  return { text: texts.join('\n'), attachments };
}
