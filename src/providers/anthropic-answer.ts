/**
 * Reading an answer of the `anthropic` provider: a whole message, validated and checked for tool ids
 * the next turn could not answer; and the errors an answer with a 200 status may carry.
 *
 * @module
 */
import { TransportError, errorTypeForStatus, isRetryableStatus, statusForErrorType } from '../errors.js';
import type { Message, ToolUseBlock } from '../protocol/messages.js';
import { validateMessage } from '../protocol/validate-messages.js';
import { readBody, type AttemptContext, type HttpResponse } from './http-exchange.js';
import { rememberRawJson } from './raw-json.js';
import { parseUpstreamJson } from './upstream-answer.js';

/** The `{type, message}` of a Messages error body, or `undefined` when `payload` is not one. */
function readErrorBody(payload: unknown): { type: string; message: string } | undefined {
  if (typeof payload !== 'object' || payload === null || (payload as { type?: unknown }).type !== 'error')
    return undefined;
  const error = (payload as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, message } = error as { type?: unknown; message?: unknown };
  if (typeof type !== 'string') return undefined;
  return { type, message: typeof message === 'string' ? message : '' };
}

/**
 * The error for an error object inside a 200 answer (an `event: error`, or a JSON error body): the status
 * its type stands for, retryable as that status would be.
 */
export function errorInAnswer(
  error: { type: string; message: string },
  where: 'response' | 'stream',
): TransportError {
  const status = statusForErrorType(error.type);
  const what =
    where === 'stream' ? 'the anthropic stream failed' : 'the anthropic endpoint answered 200 with an error';
  return new TransportError('MODEL_EHTTP', `${what}: ${error.type}: ${error.message}`, {
    provider: 'anthropic',
    status,
    type: errorTypeForStatus(status),
    retryable: isRetryableStatus(status),
  });
}

/** The first tool_use id used by two blocks of one message, if any. */
function firstDuplicateToolId(content: Message['content']): string | undefined {
  const seen = new Set<string>();
  for (const block of content) {
    if (block.type !== 'tool_use') continue;
    const id = (block as ToolUseBlock).id;
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

/**
 * Two tool calls with one id cannot both be answered: the next request would carry two tool_results
 * for that id, which the pairing check (and Anthropic) refuse. The native path passes ids through as
 * sent, so such an answer is refused rather than handed on.
 */
export function duplicateToolId(id: string): TransportError {
  return new TransportError(
    'MODEL_EPROTO',
    `the anthropic answer uses the tool_use id ${JSON.stringify(id)} for two calls; tool_use ids must be unique`,
    { provider: 'anthropic' },
  );
}

/** Reads a whole message: valid Messages protocol, with unique tool ids; an error body is that error. */
export async function readMessage(response: HttpResponse, context: AttemptContext): Promise<Message> {
  const text = await readBody(response, context);
  const payload = parseUpstreamJson(text, 'response', 'anthropic');
  const answeredError = readErrorBody(payload);
  if (answeredError !== undefined) throw errorInAnswer(answeredError, 'response');
  const validated = validateMessage(payload);
  if (!validated.ok) {
    throw new TransportError(
      'MODEL_EPROTO',
      `the anthropic response is not a valid message: ${validated.message}`,
      { provider: 'anthropic' },
    );
  }
  const duplicate = firstDuplicateToolId(validated.value.content);
  if (duplicate !== undefined) throw duplicateToolId(duplicate);
  // The validated message is the upstream's own: a relay may send its text on unchanged.
  if (validated.value === payload) rememberRawJson(validated.value, text);
  return validated.value;
}
