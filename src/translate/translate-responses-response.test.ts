import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isTransportError, type TransportError } from '../errors.js';
import { accumulateStream } from '../../test/helpers/accumulate-stream.js';
import type { MessageStreamEvent } from '../protocol/messages.js';
import type { ResponsesResponse, ResponsesStreamEvent } from '../protocol/responses.js';
import { validateResponsesResponse, validateResponsesStreamEvent } from '../protocol/validate-responses.js';
import { decodeReasoningSignature } from './reasoning-signature-codec.js';
import { translateResponsesResponse, type ResponsesContext } from './translate-responses-response.js';
import { translateResponsesRequest } from './translate-responses-request.js';
import { ResponsesStreamTranslator } from './translate-responses-stream.js';

const FIXTURES = new URL('./__fixtures__/upstream-openai-responses/', import.meta.url);

function context(maxOutputTokens?: number): ResponsesContext {
  let counter = 0;
  return {
    requestModel: 'claude-sonnet-4-5',
    toolNames: { fromUpstream: (name) => name },
    generateId: () => `gen${++counter}`,
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
  };
}

/** The Messages usage of an answer with these counts (no server here reports cache writes). */
function usage(input: number, output: number, cacheRead = 0) {
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cacheRead,
  };
}

/** The `data:` payloads of a recorded `.sse` body, or the lines of a `.chunks.jsonl` file. */
function recordedEvents(file: string): ResponsesStreamEvent[] {
  const text = readFileSync(new URL(file, FIXTURES), 'utf8');
  const payloads = file.endsWith('.sse')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice('data: '.length))
    : text.split('\n').filter((line) => line.trim() !== '');
  return payloads.map((payload) => {
    const validated = validateResponsesStreamEvent(JSON.parse(payload));
    if (!validated.ok) throw new Error(`${file}: ${validated.message}`);
    return validated.value;
  });
}

function translateEvents(
  events: readonly ResponsesStreamEvent[],
  maxOutputTokens?: number,
): { events: MessageStreamEvent[]; error: TransportError | undefined } {
  const translator = new ResponsesStreamTranslator(context(maxOutputTokens));
  const out: MessageStreamEvent[] = [...translator.start()];
  try {
    for (const event of events) {
      out.push(...translator.push(event));
      if (translator.isFinished) break;
    }
    out.push(...translator.end());
    return { events: out, error: undefined };
  } catch (error) {
    if (!isTransportError(error)) throw error;
    return { events: out, error };
  }
}

function response(fields: Partial<ResponsesResponse>): ResponsesResponse {
  return { id: 'resp_1', object: 'response', status: 'completed', output: [], ...fields };
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

describe('translateResponsesResponse', () => {
  it('translates reasoning, text and a function call, in output order', () => {
    const message = translateResponsesResponse(
      response({
        output: [
          {
            type: 'reasoning',
            id: 'rs_1',
            summary: [
              { type: 'summary_text', text: 'First.' },
              { type: 'summary_text', text: 'Second.' },
            ],
            encrypted_content: 'gAAAA',
          },
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'Hi', annotations: [] }],
          },
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_1',
            name: 'get_weather',
            arguments: '{"city":"Paris"}',
          },
        ],
        usage: {
          input_tokens: 100,
          output_tokens: 30,
          input_tokens_details: { cached_tokens: 40 },
          output_tokens_details: { reasoning_tokens: 20 },
        },
      }),
      context(),
    );
    expect(message.id).toBe('msg_resp_1');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'First.\n\nSecond.', signature: expect.stringMatching(/^tpxr1\./) },
      { type: 'text', text: 'Hi' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    expect(decodeReasoningSignature((message.content[0] as { signature: string }).signature)).toEqual({
      id: 'rs_1',
      encryptedContent: 'gAAAA',
      source: 'summary',
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toEqual(usage(60, 30, 40));
  });

  it('maps incomplete for max_output_tokens to max_tokens and for content_filter to refusal', () => {
    const cut = response({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(translateResponsesResponse(cut, context()).stop_reason).toBe('max_tokens');
    const filtered = response({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
    expect(translateResponsesResponse(filtered, context()).stop_reason).toBe('refusal');
    const refused = response({
      output: [{ type: 'message', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }],
    });
    expect(translateResponsesResponse(refused, context())).toMatchObject({
      content: [{ type: 'text', text: 'I cannot help with that.' }],
      stop_reason: 'refusal',
    });
  });

  it('maps a failed response to the upstream error, and a quota failure to a 402 billing error', () => {
    const error = failure(() =>
      translateResponsesResponse(
        response({
          status: 'failed',
          error: { code: 'insufficient_quota', message: 'You exceeded your current quota' },
        }),
        context(),
      ),
    );
    expect(error).toMatchObject({
      code: 'MODEL_EHTTP',
      status: 402,
      retryable: false,
    });
    expect(error.body.error.type).toBe('billing_error');
    expect(error.message).toContain('You exceeded your current quota');
    const server = failure(() =>
      translateResponsesResponse(
        response({ status: 'failed', error: { code: 'server_error', message: 'x' } }),
        context(),
      ),
    );
    expect(server).toMatchObject({ status: 500, retryable: true });
    expect(
      failure(() => translateResponsesResponse(response({ status: 'in_progress' }), context())).code,
    ).toBe('MODEL_EPROTO');
  });

  it('refuses a function call with arguments that are not a JSON object, unless the output limit cut it', () => {
    const broken = response({
      output: [{ type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":' }],
      usage: { output_tokens: 10 },
    });
    expect(failure(() => translateResponsesResponse(broken, context(100))).message).toMatch(
      /tool call #0 \(name "f", id "call_1"\) has arguments that are not valid JSON/,
    );
    // Cut by the limit: delivered, completed by appending only, as on the Chat Completions wire.
    const cut = translateResponsesResponse({ ...broken, usage: { output_tokens: 100 } }, context(100));
    expect(cut.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'f', input: { a: null } }]);
    expect(cut.stop_reason).toBe('max_tokens');
    const incomplete = translateResponsesResponse(
      { ...broken, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
      context(),
    );
    expect(incomplete.content).toEqual(cut.content);
    // Arguments that are not even the beginning of a JSON object: no cut explains them.
    const notJson = response({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ type: 'function_call', call_id: 'call_1', name: 'f', arguments: 'city=Par' }],
    });
    expect(failure(() => translateResponsesResponse(notJson, context())).message).toMatch(
      /not the beginning of a JSON object/,
    );
  });

  it('never counts fewer output tokens than the reasoning tokens a server reports apart', () => {
    const message = translateResponsesResponse(
      response({
        usage: { input_tokens: 5, output_tokens: 3, output_tokens_details: { reasoning_tokens: 40 } },
      }),
      context(),
    );
    expect(message.usage.output_tokens).toBe(40);
  });
});

describe('recorded Responses streams', () => {
  it('OpenAI gpt-5.1: a forced tool call streams as one tool_use block with the call id', () => {
    const { events, error } = translateEvents(recordedEvents('openai/gpt-5.1.tool-call.chunks.jsonl'));
    expect(error).toBeUndefined();
    const message = accumulateStream(events);
    expect(message.content).toEqual([
      {
        type: 'tool_use',
        id: 'call_2FQdm3Br7Qb35YUBSkDR7kue',
        name: 'get_weather',
        input: { city: 'Beijing' },
      },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toEqual(usage(45, 25));
  });

  it('OpenAI gpt-5.1-codex-max: encrypted reasoning rides in the signature and comes back as a reasoning item', () => {
    const file = 'openai/gpt-5.1-codex-max.encrypted-reasoning.tool-call.chunks.jsonl';
    const recorded = recordedEvents(file);
    const { events, error } = translateEvents(recorded);
    expect(error).toBeUndefined();
    const message = accumulateStream(events);
    const summary =
      "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, " +
      'and finally multiply that by 10, reporting the final product.';
    // The item as the service finished it (`response.output_item.done`) is what the next turn must send.
    const done = recorded.find(
      (event) => event.type === 'response.output_item.done' && event.item?.type === 'reasoning',
    )!.item!;
    expect(done.encrypted_content).toMatch(/^gAAAAA/);
    expect(message.content).toHaveLength(2);
    const thinking = message.content[0] as { type: string; thinking: string; signature: string };
    expect(thinking.type).toBe('thinking');
    expect(thinking.thinking).toBe(summary);
    expect(thinking.signature).not.toContain(done.encrypted_content!);
    expect(decodeReasoningSignature(thinking.signature)).toEqual({
      id: 'rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9',
      encryptedContent: done.encrypted_content,
      source: 'summary',
    });
    expect(message.content[1]).toEqual({
      type: 'tool_use',
      id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn',
      name: 'calculator',
      input: { a: 12, b: 7, op: 'add' },
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 134, output_tokens: 28 });

    // The next turn, translated by any replica: the reasoning item is restored in place, before the call.
    const next = translateResponsesRequest({
      model: 'gpt-5.1-codex-max',
      max_tokens: 1000,
      tools: [{ name: 'calculator', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'Compute (12 + 7) * 3 * 10 with the calculator.' },
        { role: 'assistant', content: message.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', content: '19' }],
        },
      ],
    });
    expect(next.body.input.slice(1)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9',
        summary: [{ type: 'summary_text', text: summary }],
        content: [],
        encrypted_content: done.encrypted_content,
      },
      {
        type: 'function_call',
        call_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn',
        name: 'calculator',
        arguments: '{"a":12,"b":7,"op":"add"}',
      },
      { type: 'function_call_output', call_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', output: '19' },
    ]);
    expect(next.body).toMatchObject({ store: false, include: ['reasoning.encrypted_content'] });
    expect(next.body).not.toHaveProperty('previous_response_id');
  });

  it('OpenAI gpt-5-nano: an in-stream quota error fails the stream with a 402 before any block', () => {
    const { events, error } = translateEvents(
      recordedEvents('openai/gpt-5-nano.error-insufficient-quota.chunks.jsonl'),
    );
    expect(error).toMatchObject({ code: 'MODEL_EHTTP', status: 402 });
    expect(error?.body.error.type).toBe('billing_error');
    expect(events.map((event) => event.type)).toEqual(['message_start']);
  });

  it('llama.cpp: the stream and the JSON answer of a forced tool call translate alike, with ids kept', () => {
    const { events, error } = translateEvents(
      recordedEvents('llamacpp/tiny-tools.tool-call.stream.sse'),
      200,
    );
    expect(error).toBeUndefined();
    const streamed = accumulateStream(events);
    expect(streamed.content.map((block) => block.type)).toContain('tool_use');
    for (const block of streamed.content) {
      if (block.type === 'tool_use') expect((block as { id: string }).id).toMatch(/^call_[A-Za-z0-9]+$/);
    }
    const sameStreamJson = events.at(-2) as { delta: { stop_reason: string } };
    expect(['tool_use', 'max_tokens']).toContain(sameStreamJson.delta.stop_reason);
  });

  it('llama.cpp: a JSON answer cut by the output limit, reported as completed, delivers the cut call completed', () => {
    const payload: unknown = JSON.parse(
      readFileSync(new URL('llamacpp/tiny-tools.tool-call.json', FIXTURES), 'utf8'),
    );
    const validated = validateResponsesResponse(payload);
    if (!validated.ok) throw new Error(validated.message);
    expect(validated.value.status).toBe('completed');
    const message = translateResponsesResponse(validated.value, context(200));
    expect(message.stop_reason).toBe('max_tokens');
    // Three calls were recorded; the third stops at `{ "city"` and is delivered as `{"city": null}`.
    const calls = message.content.filter((block) => block.type === 'tool_use') as { input: unknown }[];
    expect(calls).toHaveLength(3);
    expect(calls[2]!.input).toEqual({ city: null });
    expect(message.content[0]).toEqual({ type: 'text', text: '"k' });
    expect(message.usage).toEqual(usage(565, 200, 8));
  });
});
