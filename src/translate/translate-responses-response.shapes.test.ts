/**
 * The Responses answer translation on hand-built responses: every output item shape, status and stop
 * reason, with the exact message or error.
 */
import { describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../errors.js';
import type { ResponsesResponse } from '../protocol/responses.js';
import { decodeReasoningSignature, encodeReasoningSignature } from './reasoning-signature-codec.js';
import { translateResponsesResponse, type ResponsesContext } from './translate-responses-response.js';

function context(maxOutputTokens?: number): ResponsesContext {
  let counter = 0;
  return {
    requestModel: 'claude-test',
    toolNames: { fromUpstream: (name) => `caller_${name}` },
    generateId: () => `gen${++counter}`,
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
  };
}

const loose = <T>(value: unknown): T => value as T;

function response(fields: Record<string, unknown>): ResponsesResponse {
  return loose({ id: 'resp_1', object: 'response', status: 'completed', output: [], ...fields });
}

function failure(run: () => unknown): TransportError {
  try {
    run();
  } catch (error) {
    if (isTransportError(error)) return error;
    throw error;
  }
  throw new Error('expected a TransportError');
}

const translate = (fields: Record<string, unknown>, maxOutputTokens?: number) =>
  translateResponsesResponse(response(fields), context(maxOutputTokens));

const text = (value: string) => ({
  type: 'message',
  role: 'assistant',
  content: [{ type: 'output_text', text: value }],
});
const call = (fields: Record<string, unknown> = {}) => ({
  type: 'function_call',
  call_id: 'call_1',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
  ...fields,
});

describe('translateResponsesResponse: the message', () => {
  it('gives a whole Messages message with the caller-facing tool name', () => {
    expect(
      translate({ output: [text('Checking.'), call()], usage: { input_tokens: 5, output_tokens: 7 } }),
    ).toStrictEqual({
      id: 'msg_resp_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'caller_get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 5,
        output_tokens: 7,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it('ends the turn without tool calls, and reports zero usage when usage is not an object', () => {
    const message = translate({ output: [text('Hi.')], usage: 'n/a' });
    expect([message.stop_reason, message.usage]).toStrictEqual([
      'end_turn',
      { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ]);
  });

  it('refuses an answer that is not a JSON object', () => {
    const error = failure(() => translateResponsesResponse(loose('oops'), context()));
    expect([error.code, error.message]).toStrictEqual([
      'MODEL_EPROTO',
      'unintelligible upstream answer: the upstream response is not a JSON object',
    ]);
  });

  it('skips output entries that are not objects, items of other types, and empty messages', () => {
    const message = translate({
      output: [
        null,
        'text',
        { type: 'web_search_call', id: 'ws_1' },
        { id: 'no type' },
        text(''),
        text('kept'),
      ],
    });
    expect(message.content).toStrictEqual([{ type: 'text', text: 'kept' }]);
  });

  it('gives an answer the output limit cut before any output an empty content', () => {
    const message = translate({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: null,
    });
    expect([message.content, message.stop_reason]).toStrictEqual([[], 'max_tokens']);
  });

  it('refuses a finished answer without an output list instead of passing it off as empty', () => {
    for (const fields of [
      { status: undefined, output: undefined },
      { output: null },
      { output: undefined, error: null },
    ]) {
      const error = failure(() => translate(fields));
      expect([error.code, error.message], JSON.stringify(fields)).toStrictEqual([
        'MODEL_EPROTO',
        'unintelligible upstream answer: the response has no `output` list, so it holds no answer',
      ]);
    }
  });

  it('maps the error of an answer that has one and no output list', () => {
    const error = failure(() =>
      translate({
        status: undefined,
        output: undefined,
        error: { code: 'rate_limit_exceeded', message: 'slow down, please' },
      }),
    );
    expect(error.code).toBe('MODEL_EHTTP');
    expect(error.message).toContain('slow down, please');
    expect(error.status).toBe(429);
  });

  it('numbers function calls in order in its refusals', () => {
    const error = failure(() =>
      translate({ output: [call(), call({ call_id: 'call_2', arguments: '[1]' })] }),
    );
    expect(error.code).toBe('MODEL_EPROTO');
    expect(error.message).toContain('tool call #1 (name "get_weather", id "call_2")');
  });

  it('refuses a function call without a name, naming the call', () => {
    const error = failure(() => translate({ output: [call({ name: '' })] }));
    expect([error.code, error.message]).toStrictEqual([
      'MODEL_EPROTO',
      'unintelligible upstream answer: tool call #0 (no name, id "call_1") has no function name',
    ]);
  });
});

describe('translateResponsesResponse: reasoning items', () => {
  it('reads the reasoning text when there is no summary, and signs it as content', () => {
    const message = translate({
      output: [
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [],
          content: [
            { type: 'reasoning_text', text: 'first' },
            { type: 'reasoning_text', text: '' },
            { type: 'other', text: 'skipped' },
            { type: 'reasoning_text', text: 'second' },
          ],
        },
        text('Done.'),
      ],
    });
    expect(message.content[0]).toStrictEqual({
      type: 'thinking',
      thinking: 'first\n\nsecond',
      signature: encodeReasoningSignature({ id: 'rs_1', encryptedContent: undefined, source: 'content' }),
    });
  });

  it('keeps a reasoning item with nothing to show but something to restore, as a blank thinking block', () => {
    const message = translate({ output: [{ type: 'reasoning', encrypted_content: 'enc', summary: 'none' }] });
    expect(message.content).toHaveLength(1);
    const block = message.content[0] as { type: string; thinking: string; signature: string };
    expect([block.type, block.thinking]).toStrictEqual(['thinking', '']);
    expect(decodeReasoningSignature(block.signature)).toStrictEqual({
      id: undefined,
      encryptedContent: 'enc',
      source: 'summary',
    });
  });

  it('drops a reasoning item with neither text nor anything to restore', () => {
    expect(
      translate({ output: [{ type: 'reasoning', summary: [], content: null }, text('Hi.')] }).content,
    ).toStrictEqual([{ type: 'text', text: 'Hi.' }]);
  });

  it('shows reasoning text without an id or encrypted content, with an empty signature', () => {
    expect(
      translate({ output: [{ type: 'reasoning', summary: [{ type: 'summary_text', text: 'why' }] }] })
        .content,
    ).toStrictEqual([{ type: 'thinking', thinking: 'why', signature: '' }]);
  });
});

describe('translateResponsesResponse: statuses', () => {
  it('refuses a cancelled response as a retryable upstream failure', () => {
    const error = failure(() => translate({ status: 'cancelled' }));
    expect([
      error.code,
      error.status,
      error.body.error.type,
      error.retryable,
      error.provider,
      error.message,
    ]).toStrictEqual([
      'MODEL_EHTTP',
      502,
      'api_error',
      true,
      'tpx',
      'upstream cancelled the response before it finished',
    ]);
  });

  it('maps a failed response without an error to a failure saying so', () => {
    const error = failure(() => translate({ status: 'failed' }));
    expect(error.message).toBe('upstream stream error: the upstream response failed without saying why');
  });

  it('refuses a response that has not finished, naming its status', () => {
    const error = failure(() => translate({ status: 'in_progress' }));
    expect([error.code, error.message]).toStrictEqual([
      'MODEL_EPROTO',
      'unintelligible upstream answer: the response has status "in_progress", not a finished one (completed, ' +
        'incomplete or failed)',
    ]);
  });

  it('takes an answer without a status as completed', () => {
    expect(translate({ status: undefined, output: [text('Hi.')] }).stop_reason).toBe('end_turn');
  });
});

describe('translateResponsesResponse: stop reasons', () => {
  it('maps incomplete for the content filter to refusal, and for any other reason to max_tokens', () => {
    expect(
      translate({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } }).stop_reason,
    ).toBe('refusal');
    expect(
      translate({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }).stop_reason,
    ).toBe('max_tokens');
    expect(translate({ status: 'incomplete', incomplete_details: null }).stop_reason).toBe('max_tokens');
    expect(translate({ status: 'incomplete' }, 100).stop_reason).toBe('max_tokens');
  });

  it('delivers a call the content filter stopped only when its arguments are whole', () => {
    const message = translate({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [call()],
    });
    expect(message.content).toStrictEqual([
      { type: 'tool_use', id: 'call_1', name: 'caller_get_weather', input: { city: 'Paris' } },
    ]);
    const error = failure(() =>
      translate({
        status: 'incomplete',
        incomplete_details: { reason: 'content_filter' },
        output: [call({ arguments: '{"city":' })],
      }),
    );
    expect(error.code).toBe('MODEL_EPROTO');
  });

  it('reads a completed answer at or over the output limit as cut, and under it as finished', () => {
    expect(translate({ output: [text('a')], usage: { output_tokens: 100 } }, 100).stop_reason).toBe(
      'max_tokens',
    );
    expect(translate({ output: [text('a')], usage: { output_tokens: 99 } }, 100).stop_reason).toBe(
      'end_turn',
    );
    expect(translate({ output: [text('a')], usage: { output_tokens: 500 } }).stop_reason).toBe('end_turn');
    expect(translate({ output: [text('a')], usage: null }, 100).stop_reason).toBe('end_turn');
    expect(translate({ output: [text('a')], usage: { output_tokens: '500' } }, 100).stop_reason).toBe(
      'end_turn',
    );
  });

  it("completes a cut call's arguments when the output limit cut a completed answer", () => {
    const message = translate(
      { output: [call({ arguments: '{"city":"Par' })], usage: { output_tokens: 50 } },
      50,
    );
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content).toStrictEqual([
      { type: 'tool_use', id: 'call_1', name: 'caller_get_weather', input: { city: 'Par' } },
    ]);
  });

  it('maps a refusal part to refusal', () => {
    const message = translate({
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] }],
    });
    expect([message.stop_reason, message.content]).toStrictEqual([
      'refusal',
      [{ type: 'text', text: 'I cannot.' }],
    ]);
  });
});
