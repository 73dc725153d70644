/**
 * The Messages-side front end, on both wires: what it reads once for Chat Completions and the Responses
 * API alike, and how each wire's own words reach its refusals.
 */
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { ContentBlockParam, MessageParam, MessagesRequest } from '../protocol/messages.js';
import { chatRequestWire } from './chat-request-wire.js';
import { DIALECTS } from './dialects.js';
import { RESPONSES_REQUEST_WIRE } from './encode-responses-request.js';
import { prepareRequest } from './prepare-request.js';
import type { RequestWire } from './request-wire.js';

function request(fields: Partial<MessagesRequest> = {}): MessagesRequest {
  return { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...fields };
}

function refusal(fields: Partial<MessagesRequest>, wire: RequestWire): string {
  try {
    prepareRequest(request(fields), wire);
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_EINVAL') return error.message;
    throw error;
  }
  throw new Error('expected MODEL_EINVAL');
}

const LOOK = { name: 'look', input_schema: { type: 'object' } };
const CALL_LOOK: MessageParam = {
  role: 'assistant',
  content: [{ type: 'tool_use', id: 'call_1', name: 'look', input: {} }],
};

const LOOK_RESULT: ContentBlockParam = {
  type: 'tool_result',
  tool_use_id: 'call_1',
  content: 'seen',
  is_error: true,
};

const WIRES: [string, RequestWire, string][] = [
  ['Chat Completions', chatRequestWire(undefined), 'OpenAI-compatible servers'],
  ['the Responses API', RESPONSES_REQUEST_WIRE, 'the Responses API'],
];

describe.each(WIRES)('prepareRequest for %s', (_name, wire, prefillRefuser) => {
  it('refuses a final assistant message (prefill), naming it and what cannot continue it', () => {
    const prefill = (content: string) =>
      refusal(
        {
          messages: [
            { role: 'user', content: 'Write JSON.' },
            { role: 'assistant', content },
          ],
        },
        wire,
      );
    const message =
      'messages[1]: the request ends with an assistant message (a prefill), and prefill is not supported by ' +
      `${prefillRefuser}; end the request with a user message`;
    expect(prefill('{')).toBe(message);
    expect(prefill('Once upon')).toBe(message);
  });

  it('drops a blank prefill, leaving the turns before it', () => {
    const prepared = prepareRequest(
      request({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'text', text: ' \n' }] },
        ],
      }),
      wire,
    );
    expect(prepared.turns).toStrictEqual([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }]);
  });

  it('places the results of a call right after it, and a system message between them after the results', () => {
    const prepared = prepareRequest(
      request({
        tools: [LOOK],
        messages: [
          { role: 'user', content: 'a' },
          CALL_LOOK,
          { role: 'system', content: 'note' },
          { role: 'user', content: [LOOK_RESULT, { type: 'text', text: 'b' }] },
        ],
      }),
      wire,
    );
    expect(prepared.turns).toStrictEqual([
      { role: 'user', parts: [{ type: 'text', text: 'a' }] },
      {
        role: 'assistant',
        blocks: [{ type: 'tool_call', id: 'call_1', name: 'look', arguments: '{}' }],
      },
      {
        role: 'tool',
        results: [{ callId: 'call_1', isError: true, parts: [{ type: 'text', text: 'seen' }] }],
      },
      { role: 'system', text: 'note' },
      { role: 'user', parts: [{ type: 'text', text: 'b' }] },
    ]);
  });

  it('reads the tool choice, the effort and the output schema alike', () => {
    const schema = { type: 'object' };
    const prepared = prepareRequest(
      request({
        tools: [LOOK],
        tool_choice: { type: 'tool', name: 'look', disable_parallel_tool_use: true },
        thinking: { type: 'enabled', budget_tokens: 2048 },
        output_config: { format: { type: 'json_schema', schema } },
      }),
      wire,
    );
    expect(prepared).toMatchObject({
      toolChoice: { name: 'look' },
      parallelToolCalls: false,
      effort: 'low',
      summarizesThinking: true,
      outputSchema: schema,
    });
  });
});

describe('prepareRequest: what only one wire takes', () => {
  it('keeps cache markers only for a wire whose server takes them', () => {
    const cached = request({
      system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
      cache_control: { type: 'ephemeral', ttl: '1h' },
    });
    const openrouter = prepareRequest(cached, chatRequestWire(DIALECTS.openrouter));
    expect(openrouter.system).toStrictEqual([
      { type: 'text', text: 'sys', cacheControl: { type: 'ephemeral' } },
    ]);
    expect(openrouter.cacheControl).toStrictEqual({ type: 'ephemeral', ttl: '1h' });
    const responses = prepareRequest(cached, RESPONSES_REQUEST_WIRE);
    expect(responses.system).toStrictEqual([{ type: 'text', text: 'sys' }]);
    expect(responses.cacheControl).toBeUndefined();
  });
});
