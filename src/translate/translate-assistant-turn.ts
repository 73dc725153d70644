/**
 * One merged assistant turn → one Chat Completions assistant message (docs/translation.md). Pure.
 *
 * @module
 */
import type { ChatAssistantMessage, ChatToolCall } from '../protocol/chat-completions.js';
import { stringifyExactJson } from '../protocol/exact-json.js';
import { blockPath, type Turn } from './check-pairing.js';
import { invalidRequest, untranslatableBlock } from './invalid-request.js';
import { decodeToolId } from './tool-id-codec.js';
import type { ToolNameMap } from './tool-name-codec.js';

/**
 * An assistant turn as one assistant message: texts joined into `content`, thinking into
 * `reasoning_content`, `tool_use` blocks into `tool_calls` (ids decoded, names encoded);
 * `redacted_thinking` is dropped.
 *
 * @throws TransportError `MODEL_EINVAL` for a block an assistant message cannot carry.
 */
export function translateAssistantTurn(turn: Turn, toolNames: ToolNameMap): ChatAssistantMessage {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const positioned of turn.blocks) {
    const { block } = positioned;
    switch (block.type) {
      case 'text':
        texts.push(String(block['text']));
        break;
      case 'thinking':
        reasoning.push(String(block['thinking']));
        break;
      case 'redacted_thinking':
        // Encrypted for Anthropic only: nothing another server can read. Dropped.
        break;
      case 'tool_use':
        toolCalls.push({
          id: decodeToolId(String(block['id'])),
          type: 'function',
          function: {
            name: toolNames.toUpstream(String(block['name'])),
            arguments: stringifyExactJson(block['input'] ?? {}),
          },
        });
        break;
      case 'image':
        invalidRequest(
          `${blockPath(positioned)}: Chat Completions does not accept images in assistant messages`,
        );
        break;
      case 'document':
        invalidRequest(`${blockPath(positioned)}: document blocks are only translated in user messages`);
        break;
      case 'tool_result':
        invalidRequest(
          `${blockPath(positioned)}: tool_result blocks belong in user messages, not assistant messages`,
        );
        break;
      default:
        untranslatableBlock(positioned);
    }
  }
  const message: ChatAssistantMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('\n\n') : toolCalls.length > 0 ? null : '',
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('\n\n');
  return message;
}
