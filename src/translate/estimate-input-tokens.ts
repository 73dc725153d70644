/**
 * A conservative estimate of a Messages request's input tokens, for `count_tokens` on the `tpx` path,
 * where the upstream has no counting endpoint (docs/protocol.md D.9).
 *
 * Clients use the count to decide when to compact a conversation, so an under-estimate is the expensive
 * mistake: the context overflows upstream. The estimate therefore leans high on purpose:
 *
 * - text (system, messages, tool results, thinking, tool inputs as JSON, tool definitions as JSON) is
 *   counted with the `cl100k_base` BPE and then multiplied by {@link TEXT_FACTOR}, because Claude-style
 *   tokenizers produce noticeably more tokens than `cl100k_base` for the same text;
 * - every message adds {@link PER_MESSAGE_TOKENS} for role and framing;
 * - a request with tools adds {@link TOOLS_OVERHEAD_TOKENS} for the tool-use preamble servers insert;
 * - an image counts as {@link IMAGE_TOKENS} (the cost of a full-size image), a base64 document as one
 *   token per {@link DOCUMENT_BYTES_PER_TOKEN} decoded bytes.
 *
 * The counting function is injected, so this stays pure and its tests need no tokenizer;
 * `providers/load-token-counter.ts` loads the real one lazily (the BPE ranks take a few hundred ms to
 * load).
 *
 * @module
 */

import { isObject } from '../protocol/is-object.js';

/** Counts the tokens of one string. */
export type CountTextTokens = (text: string) => number;

/** Multiplier applied to BPE counts: `cl100k_base` under-counts Claude-style tokenization. */
export const TEXT_FACTOR = 1.25;
/** Role and framing tokens added per message. */
export const PER_MESSAGE_TOKENS = 8;
/** Tokens added once when the request defines tools. */
export const TOOLS_OVERHEAD_TOKENS = 400;
/** What one image counts as: the cost of a full-size (about 1.15 megapixel) image. */
export const IMAGE_TOKENS = 1_600;
/** Decoded bytes of a base64 document per token. */
export const DOCUMENT_BYTES_PER_TOKEN = 16;

interface Tally {
  text: string[];
  fixedTokens: number;
}

function addDocument(block: Record<string, unknown>, tally: Tally): void {
  const source = block['source'];
  if (!isObject(source)) return;
  const data = source['data'];
  switch (source['type']) {
    case 'text':
      if (typeof data === 'string') tally.text.push(data);
      return;
    case 'base64':
      if (typeof data === 'string')
        tally.fixedTokens += Math.ceil((data.length * 0.75) / DOCUMENT_BYTES_PER_TOKEN);
      return;
    case 'content':
      addContent(source['content'], tally);
      return;
    default:
      // A URL or file reference: its size is unknown here, so count it like a full-size image.
      tally.fixedTokens += IMAGE_TOKENS;
  }
}

function addBlock(block: unknown, tally: Tally): void {
  if (!isObject(block)) return;
  switch (block['type']) {
    case 'text':
      if (typeof block['text'] === 'string') tally.text.push(block['text']);
      return;
    case 'thinking':
      if (typeof block['thinking'] === 'string') tally.text.push(block['thinking']);
      return;
    case 'redacted_thinking':
      if (typeof block['data'] === 'string') tally.fixedTokens += Math.ceil(block['data'].length / 4);
      return;
    case 'tool_use':
      if (typeof block['name'] === 'string') tally.text.push(block['name']);
      tally.text.push(JSON.stringify(block['input'] ?? {}));
      return;
    case 'tool_result':
      addContent(block['content'], tally);
      return;
    case 'image':
      tally.fixedTokens += IMAGE_TOKENS;
      return;
    case 'document':
      addDocument(block, tally);
      return;
    default:
      // A block type this estimate does not know: its JSON is an upper bound of what it carries.
      tally.text.push(JSON.stringify(block));
  }
}

function addContent(content: unknown, tally: Tally): void {
  if (typeof content === 'string') tally.text.push(content);
  else if (Array.isArray(content)) for (const block of content) addBlock(block, tally);
}

/**
 * Estimates the input tokens of a request (a Messages request, with or without `max_tokens`).
 * Tolerates any shape: fields it cannot read count as nothing.
 *
 * @example
 * estimateInputTokens({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, (text) => text.length)
 * // → ceil(2 × 1.25) + 8 = 11
 */
export function estimateInputTokens(request: Record<string, unknown>, countText: CountTextTokens): number {
  const tally: Tally = { text: [], fixedTokens: 0 };
  addContent(request['system'], tally);
  const messages = request['messages'];
  if (Array.isArray(messages)) {
    for (const message of messages) {
      tally.fixedTokens += PER_MESSAGE_TOKENS;
      if (isObject(message)) addContent(message['content'], tally);
    }
  }
  const tools = request['tools'];
  if (Array.isArray(tools) && tools.length > 0) {
    tally.fixedTokens += TOOLS_OVERHEAD_TOKENS;
    for (const tool of tools) tally.text.push(JSON.stringify(tool));
  }
  let textTokens = 0;
  for (const text of tally.text) textTokens += countText(text);
  return Math.ceil(textTokens * TEXT_FACTOR) + tally.fixedTokens;
}
