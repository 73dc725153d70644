/**
 * The wire-neutral conversation → Chat Completions messages (docs/translation.md): the system prompt
 * first, then one message per turn, and per batch of tool results one tool message per result followed
 * by one user message for the images and files tool messages cannot hold. Pure.
 *
 * @module
 */
import type {
  ChatAssistantMessage,
  ChatContentPart,
  ChatMessage,
  ChatTextPart,
  ChatToolCall,
} from '../protocol/chat-completions.js';
import { nothingToSend } from './invalid-request.js';
import { isTextPart } from './map-document-block.js';
import type { AssistantBlock, ContentPart, NeutralTurn, TextPart, ToolResult } from './neutral-request.js';
import { TOOL_ERROR_PREFIX } from './read-tool-result.js';

/**
 * The messages for a system prompt and turns.
 *
 * @throws TransportError `MODEL_EINVAL` when there is nothing to send (the only message was a blank
 *   prefill, and there is no system prompt).
 */
export function encodeChatMessages(
  system: readonly TextPart[],
  turns: readonly NeutralTurn[],
): ChatMessage[] {
  const messages = [...chatSystemPrompt(system), ...turns.flatMap(chatMessagesOf)];
  if (messages.length === 0) nothingToSend();
  return messages;
}

/** The system prompt as one system message: parts only to carry cache markers, else one text. */
function chatSystemPrompt(system: readonly TextPart[]): ChatMessage[] {
  if (system.some((part) => part.cacheControl !== undefined)) {
    return [{ role: 'system', content: system.map(chatTextPart) }];
  }
  const text = system.map((part) => part.text).join('\n\n');
  return text === '' ? [] : [{ role: 'system', content: text }];
}

function chatMessagesOf(turn: NeutralTurn): ChatMessage[] {
  switch (turn.role) {
    case 'system':
      return [{ role: 'system', content: turn.text }];
    case 'user':
      return [{ role: 'user', content: chatUserContent(turn.parts) }];
    case 'assistant':
      return [chatAssistantMessage(turn.blocks)];
    case 'tool':
      return chatToolMessages(turn.results);
    default: {
      const unknown: never = turn;
      return unknown;
    }
  }
}

function chatTextPart(part: TextPart): ChatTextPart {
  return part.cacheControl === undefined
    ? { type: 'text', text: part.text }
    : { type: 'text', text: part.text, cache_control: part.cacheControl };
}

function chatContentPart(part: ContentPart): ChatContentPart {
  switch (part.type) {
    case 'text':
      return chatTextPart(part);
    case 'image':
      return { type: 'image_url', image_url: { url: part.url } };
    case 'file':
      // Chat Completions takes a file's data URL and its URL in the same field (OpenRouter, per dialect).
      return { type: 'file', file: { filename: part.filename, file_data: part.url } };
    default: {
      const unknown: never = part;
      return unknown;
    }
  }
}

/** User content: a plain string for a single text without `cache_control`, else content parts. */
function chatUserContent(parts: readonly ContentPart[]): string | ChatContentPart[] {
  const [only] = parts;
  if (parts.length === 1 && only?.type === 'text' && only.cacheControl === undefined) return only.text;
  return parts.length === 0 ? '' : parts.map(chatContentPart);
}

/**
 * An assistant turn as one assistant message: texts joined into `content`, thinking into
 * `reasoning_content`, tool calls into `tool_calls`.
 */
function chatAssistantMessage(blocks: readonly AssistantBlock[]): ChatAssistantMessage {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const block of blocks) {
    if (block.type === 'text') texts.push(block.text);
    else if (block.type === 'thinking') reasoning.push(block.thinking);
    else
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: block.arguments },
      });
  }
  const message: ChatAssistantMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('\n\n') : toolCalls.length > 0 ? null : '',
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('\n\n');
  return message;
}

/**
 * One tool message per result, in order: its texts joined by a line break, marked with
 * {@link TOOL_ERROR_PREFIX} for an error. Then, when any result carried images or files (which tool
 * messages cannot hold), one user message with them, each group introduced by a text part naming its
 * tool call.
 */
function chatToolMessages(results: readonly ToolResult[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const attachmentParts: ChatContentPart[] = [];
  for (const result of results) {
    const text = result.parts
      .filter(isTextPart)
      .map((part) => part.text)
      .join('\n');
    const content = result.isError ? `${TOOL_ERROR_PREFIX}${text}` : text;
    messages.push({ role: 'tool', tool_call_id: result.callId, content });
    const attachments = result.parts.filter((part) => !isTextPart(part));
    if (attachments.length > 0) {
      const what = attachments.every((part) => part.type === 'image') ? 'Images' : 'Files';
      attachmentParts.push(
        { type: 'text', text: `${what} from the result of tool call ${result.callId}:` },
        ...attachments.map(chatContentPart),
      );
    }
  }
  if (attachmentParts.length > 0) messages.push({ role: 'user', content: attachmentParts });
  return messages;
}
