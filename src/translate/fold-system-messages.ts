/**
 * Folds system messages for servers whose chat templates accept a system message only at the very
 * beginning. Pure.
 *
 * The Messages protocol allows `role: "system"` messages anywhere in `messages` (Claude Code sends them
 * from the first turn), and the translator keeps each one in place. Many open-model chat templates —
 * Qwen3's among them, as served by vLLM, llama.cpp and Ollama — raise "System message must be at the
 * beginning." for any other position, so the whole request fails.
 *
 * The fold:
 * - the system messages before the first other message (the `system` field, then any leading
 *   `role: "system"` messages) become one system message, their texts joined by a blank line;
 * - every later system message stays where it was, as user-side text wrapped in
 *   `<system-message>…</system-message>`: merged into the next user message when one follows directly,
 *   else into the user message just before it, else sent as a user message of its own.
 *
 * Why user-side text in place rather than merging everything into the leading system message: the
 * position is part of the meaning (a note that applies from this turn on must not read as if it had been
 * there from the start), and local servers reuse their cache for the unchanged beginning of a prompt —
 * llama.cpp's slot cache, vLLM's prefix cache. Merging a new system message into the first one would
 * change the very first tokens and make the server process the whole conversation again on every such
 * turn; text in place leaves every earlier token as it was. Merging into a neighbouring user message,
 * rather than always adding one, keeps user and assistant turns alternating, which some templates
 * require.
 *
 * @module
 */
import type { ChatContentPart, ChatMessage, ChatUserMessage } from '../protocol/chat-completions.js';

/** Wraps a later system message's text so the model can tell it from what the user wrote. */
export function systemMessageAsUserText(text: string): string {
  return `<system-message>\n${text}\n</system-message>`;
}

/**
 * A system message's text: its text parts (sent as parts only to carry `cache_control`) joined as the
 * translator joins system blocks. Folding drops their cache markers.
 */
function systemText(content: string | readonly { text: string }[]): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('\n\n');
}

/** The messages with at most one system message, first (see the module comment). */
export function foldSystemMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  const leading: string[] = [];
  let position = 0;
  for (; position < messages.length; position++) {
    const message = messages[position]!;
    if (message.role !== 'system' && message.role !== 'developer') break;
    const text = systemText(message.content);
    if (text !== '') leading.push(text);
  }
  const folded: ChatMessage[] = leading.length > 0 ? [{ role: 'system', content: leading.join('\n\n') }] : [];

  // Later system texts waiting for the next user message, or for the end.
  let waiting: string[] = [];
  for (; position < messages.length; position++) {
    const message = messages[position]!;
    if (message.role === 'system' || message.role === 'developer') {
      const text = systemText(message.content);
      if (text !== '') waiting.push(systemMessageAsUserText(text));
      continue;
    }
    if (waiting.length > 0) {
      if (message.role === 'user') {
        folded.push(withText(message, waiting, 'before'));
        waiting = [];
        continue;
      }
      placeBeforeNonUser(folded, waiting);
      waiting = [];
    }
    folded.push(message);
  }
  if (waiting.length > 0) placeBeforeNonUser(folded, waiting);
  return folded;
}

/** System texts followed by no user message: into the user message before them, else on their own. */
function placeBeforeNonUser(folded: ChatMessage[], texts: readonly string[]): void {
  const previous = folded.at(-1);
  if (previous?.role === 'user') folded[folded.length - 1] = withText(previous, texts, 'after');
  else folded.push({ role: 'user', content: texts.join('\n\n') });
}

/** A copy of a user message with texts added before or after its content. */
function withText(
  message: ChatUserMessage,
  texts: readonly string[],
  where: 'before' | 'after',
): ChatUserMessage {
  const added = texts.join('\n\n');
  if (typeof message.content === 'string') {
    if (message.content === '') return { ...message, content: added };
    const content = where === 'before' ? `${added}\n\n${message.content}` : `${message.content}\n\n${added}`;
    return { ...message, content };
  }
  const part: ChatContentPart = { type: 'text', text: added };
  const content = where === 'before' ? [part, ...message.content] : [...message.content, part];
  return { ...message, content };
}
