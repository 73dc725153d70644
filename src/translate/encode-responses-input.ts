/**
 * The wire-neutral conversation → Responses API `input` items (docs/translation.md, "The Responses
 * wire"): one `message` item per user or system turn, an assistant turn as its reasoning items, messages
 * and `function_call` items in order, one `function_call_output` per tool result. Pure.
 *
 * @module
 */
import type {
  ResponsesInputContent,
  ResponsesInputItem,
  ResponsesOutputText,
} from '../protocol/responses.js';
import { nothingToSend } from './invalid-request.js';
import type { AssistantBlock, ContentPart, NeutralTurn, ToolResult } from './neutral-request.js';
import { decodeReasoningSignature } from './reasoning-signature-codec.js';
import { TOOL_ERROR_PREFIX } from './read-tool-result.js';

/**
 * The input items for a conversation's turns.
 *
 * @throws TransportError `MODEL_EINVAL` when there is nothing to send (the only message was a blank
 *   prefill).
 */
export function encodeResponsesInput(turns: readonly NeutralTurn[]): ResponsesInputItem[] {
  const items = turns.flatMap(inputItemsOf);
  if (items.length === 0) nothingToSend();
  return items;
}

function inputItemsOf(turn: NeutralTurn): ResponsesInputItem[] {
  switch (turn.role) {
    case 'system':
      return [{ type: 'message', role: 'system', content: [{ type: 'input_text', text: turn.text }] }];
    case 'user': {
      const content = turn.parts.map(inputContent);
      const parts = content.length > 0 ? content : [{ type: 'input_text' as const, text: '' }];
      return [{ type: 'message', role: 'user', content: parts }];
    }
    case 'assistant':
      return assistantItems(turn.blocks);
    case 'tool':
      return turn.results.map(functionCallOutput);
    default: {
      const unknown: never = turn;
      return unknown;
    }
  }
}

function inputContent(part: ContentPart): ResponsesInputContent {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image':
      return { type: 'input_image', image_url: part.url, detail: 'auto' };
    case 'file':
      return part.isDataUrl
        ? { type: 'input_file', filename: part.filename, file_data: part.url }
        : { type: 'input_file', file_url: part.url };
    default: {
      const unknown: never = part;
      return unknown;
    }
  }
}

/**
 * An assistant turn's blocks, in order: one assistant message per run of texts, a reasoning item per
 * thinking block whose signature this transport made (`reasoning-signature-codec.ts`), one
 * `function_call` per tool call. Other thinking blocks (Anthropic's, or the Chat Completions wire's,
 * whose signature is empty) cannot be restored and are dropped.
 */
function assistantItems(blocks: readonly AssistantBlock[]): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  let texts: ResponsesOutputText[] = [];
  const flushTexts = (): void => {
    if (texts.length > 0) items.push({ type: 'message', role: 'assistant', content: texts });
    texts = [];
  };
  for (const block of blocks) {
    if (block.type === 'text') {
      texts.push({ type: 'output_text', text: block.text, annotations: [] });
      continue;
    }
    const item =
      block.type === 'thinking' ? reasoningItem(block.thinking, block.signature) : functionCall(block);
    if (item === undefined) continue;
    flushTexts();
    items.push(item);
  }
  flushTexts();
  return items;
}

function reasoningItem(text: string, signature: string): ResponsesInputItem | undefined {
  const reference = decodeReasoningSignature(signature);
  if (reference === undefined) return undefined;
  return {
    type: 'reasoning',
    ...(reference.id === undefined ? {} : { id: reference.id }),
    summary: reference.source === 'summary' && text !== '' ? [{ type: 'summary_text', text }] : [],
    content: reference.source === 'content' && text !== '' ? [{ type: 'reasoning_text', text }] : [],
    ...(reference.encryptedContent === undefined ? {} : { encrypted_content: reference.encryptedContent }),
  };
}

function functionCall(call: Extract<AssistantBlock, { type: 'tool_call' }>): ResponsesInputItem {
  return { type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments };
}

/**
 * A tool result → `function_call_output`. Text-only content is a string, joined by line breaks; content
 * with images or files is a list of input parts. An error is marked with {@link TOOL_ERROR_PREFIX}: on
 * the string, or as a first text part.
 */
function functionCallOutput(result: ToolResult): ResponsesInputItem {
  const parts = result.parts.map(inputContent);
  const texts = parts.flatMap((part) => (part.type === 'input_text' ? [part.text] : []));
  if (texts.length === parts.length) {
    const text = texts.join('\n');
    return {
      type: 'function_call_output',
      call_id: result.callId,
      output: result.isError ? `${TOOL_ERROR_PREFIX}${text}` : text,
    };
  }
  if (result.isError) parts.unshift({ type: 'input_text', text: TOOL_ERROR_PREFIX.trim() });
  return { type: 'function_call_output', call_id: result.callId, output: parts };
}
