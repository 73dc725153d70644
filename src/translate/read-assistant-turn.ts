/**
 * One merged assistant turn → its wire-neutral blocks (docs/translation.md). Pure.
 *
 * @module
 */
import { stringifyExactJson } from '../protocol/exact-json.js';
import { blockPath, type Turn } from './check-pairing.js';
import { invalidRequest, untranslatableBlock } from './invalid-request.js';
import type { AssistantBlock } from './neutral-request.js';
import type { RequestWire } from './request-wire.js';
import { decodeToolId } from './tool-id-codec.js';
import type { ToolNameMap } from './tool-name-codec.js';

/**
 * An assistant turn's blocks, in order: texts, thinking (with its signature), and `tool_use` blocks as
 * tool calls (ids decoded to the provider's, names encoded, input as exact JSON text);
 * `redacted_thinking` is dropped.
 *
 * @throws TransportError `MODEL_EINVAL` for a block an assistant message cannot carry.
 */
export function readAssistantTurn(turn: Turn, toolNames: ToolNameMap, wire: RequestWire): AssistantBlock[] {
  const blocks: AssistantBlock[] = [];
  for (const positioned of turn.blocks) {
    const { block } = positioned;
    switch (block.type) {
      case 'text':
        blocks.push({ type: 'text', text: String(block['text']) });
        break;
      case 'thinking': {
        const { thinking, signature } = block as Record<string, unknown>;
        blocks.push({
          type: 'thinking',
          thinking: typeof thinking === 'string' ? thinking : '',
          signature: typeof signature === 'string' ? signature : '',
        });
        break;
      }
      case 'redacted_thinking':
        // Encrypted for Anthropic only: nothing another server can read. Dropped.
        break;
      case 'tool_use':
        blocks.push({
          type: 'tool_call',
          id: decodeToolId(String(block['id'])),
          name: toolNames.toUpstream(String(block['name'])),
          arguments: stringifyExactJson(block['input'] ?? {}),
        });
        break;
      case 'image':
      case 'document':
        invalidRequest(`${blockPath(positioned)}: ${wire.assistantMediaRefusal(block.type)}`);
        break;
      case 'tool_result':
        invalidRequest(
          `${blockPath(positioned)}: tool_result blocks belong in user messages, not assistant messages`,
        );
        break;
      default:
        untranslatableBlock(positioned, wire.name);
    }
  }
  return blocks;
}
