/**
 * The `tpx` provider's context editing: the request's context edits (`apply-context-edits.ts`) applied
 * before translation, and reported on the answer where Anthropic reports them.
 *
 * @module
 */
import type { Message, MessagesRequest, MessageStreamEvent } from '../protocol/messages.js';
import {
  applyContextEdits,
  needsTokenCounter,
  type ContextEditOutcome,
} from '../translate/apply-context-edits.js';
import type { CountTextTokens } from '../translate/estimate-input-tokens.js';
import { MAX_RUN_CHARS, SLICE_CHARS, estimateInputTokensInSlices } from './estimate-tokens-in-slices.js';
import { loadTokenCounter } from './load-token-counter.js';

/**
 * Applies the request's context edits before translation. What an edit clears is counted (each applied
 * edit reports its `cleared_input_tokens`), in slices with long runs broken, so its cost stays linear;
 * only tool-use clearing also needs the request's own count, for its trigger, and that goes through the
 * sliced estimate (the loop is given back while counting).
 */
export async function applyEdits(request: MessagesRequest): Promise<ContextEditOutcome> {
  if (request['context_management'] === undefined || request['context_management'] === null) {
    return { request, appliedEdits: undefined };
  }
  const countText = await loadTokenCounter();
  const options = needsTokenCounter(request)
    ? { inputTokens: await estimateInputTokensInSlices(request, countText) }
    : {};
  return applyContextEdits(request, countLinearly(countText), options);
}

/** A counter whose cost stays linear on hostile text: slices, and runs without spaces broken. */
function countLinearly(countText: CountTextTokens): CountTextTokens {
  const longRun = new RegExp(`(\\S{${MAX_RUN_CHARS}})(?=\\S)`, 'g');
  return (text) => {
    let tokens = 0;
    for (let start = 0; start < text.length; start += SLICE_CHARS) {
      tokens += countText(text.slice(start, start + SLICE_CHARS).replace(longRun, '$1 '));
    }
    return tokens;
  };
}

/** Reports the applied context edits on the message, as Anthropic does. */
export function withAppliedEdits(message: Message, edits: ContextEditOutcome): Message {
  if (edits.appliedEdits === undefined) return message;
  return { ...message, context_management: { applied_edits: edits.appliedEdits } };
}

/** Reports the applied context edits on `message_delta`, where Anthropic's streams carry them. */
export function reportEdits(events: MessageStreamEvent[], edits: ContextEditOutcome): MessageStreamEvent[] {
  const appliedEdits = edits.appliedEdits;
  if (appliedEdits === undefined) return events;
  return events.map((event) =>
    event.type === 'message_delta'
      ? { ...event, context_management: { applied_edits: appliedEdits } }
      : event,
  );
}
