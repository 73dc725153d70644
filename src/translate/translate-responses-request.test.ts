import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { ContentBlockParam, MessageParam, MessagesRequest } from '../protocol/messages.js';
import { encodeReasoningSignature } from './reasoning-signature-codec.js';
import { encodeToolId } from './tool-id-codec.js';
import { translateResponsesRequest } from './translate-responses-request.js';

function request(fields: Partial<MessagesRequest> = {}): MessagesRequest {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'Hello' }],
    ...fields,
  };
}

function refusal(fields: Partial<MessagesRequest>): string {
  try {
    translateResponsesRequest(request(fields));
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_EINVAL') return error.message;
    throw error;
  }
  throw new Error('expected MODEL_EINVAL');
}

/** An assistant turn calling the weather tool under `id`. */
const weatherCall = (id: string): MessageParam => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id, name: 'get_weather', input: {} }],
});

const weatherTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('translateResponsesRequest', () => {
  it('sends the system prompt as instructions, the turns as input items, and keeps no server state', () => {
    const { body } = translateResponsesRequest(
      request({
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: 'Be kind.' },
        ],
      }),
      { model: 'gpt-5.1' },
    );
    expect(body).toEqual({
      model: 'gpt-5.1',
      instructions: 'Be brief.\n\nBe kind.',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }],
      max_output_tokens: 1024,
      store: false,
      include: ['reasoning.encrypted_content'],
    });
    expect(body).not.toHaveProperty('previous_response_id');
  });

  it('translates a whole tool round trip into message, function_call and function_call_output items', () => {
    const providerId = 'functions.get_weather:0';
    const callerId = encodeToolId(providerId, 1, () => 'unused');
    const { body } = translateResponsesRequest(
      request({
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Let me check.' },
              { type: 'tool_use', id: callerId, name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: callerId, content: 'sunny' },
              { type: 'text', text: 'Thanks' },
            ],
          },
        ],
      }),
    );
    expect(body.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }],
      },
      { type: 'function_call', call_id: providerId, name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: providerId, output: 'sunny' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
    ]);
    expect(body.tools).toEqual([
      {
        type: 'function',
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: weatherTool.input_schema,
        strict: false,
      },
    ]);
  });

  it('restores a reasoning item from a thinking block signed by this transport, in place', () => {
    const signature = encodeReasoningSignature({ id: 'rs_1', encryptedContent: 'gAAAA', source: 'summary' });
    const contentSigned = encodeReasoningSignature({
      id: 'rs_2',
      encryptedContent: undefined,
      source: 'content',
    });
    const { body } = translateResponsesRequest(
      request({
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Need the tool.', signature },
              { type: 'thinking', thinking: 'raw chain', signature: contentSigned },
              { type: 'thinking', thinking: 'from Anthropic', signature: 'EqQBCkgIARABGAIiQL2F' },
              { type: 'redacted_thinking', data: 'opaque' },
              { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny' }] },
        ],
      }),
    );
    expect(body.input.slice(1)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [{ type: 'summary_text', text: 'Need the tool.' }],
        content: [],
        encrypted_content: 'gAAAA',
      },
      {
        type: 'reasoning',
        id: 'rs_2',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'raw chain' }],
      },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ]);
  });

  it('maps tool_choice, disable_parallel_tool_use and strict tools', () => {
    const strictTool = { ...weatherTool, name: 'strict_one', strict: true };
    const cases: [NonNullable<MessagesRequest['tool_choice']>, unknown][] = [
      [{ type: 'auto' }, 'auto'],
      [{ type: 'none' }, 'none'],
      [{ type: 'any' }, 'required'],
      [
        { type: 'tool', name: 'get_weather' },
        { type: 'function', name: 'get_weather' },
      ],
    ];
    for (const [choice, expected] of cases) {
      const { body } = translateResponsesRequest(
        request({ tools: [weatherTool, strictTool], tool_choice: choice }),
      );
      expect(body.tool_choice).toEqual(expected);
      expect(body.tools?.map((tool) => tool.strict)).toEqual([false, true]);
    }
    const { body } = translateResponsesRequest(
      request({ tools: [weatherTool], tool_choice: { type: 'any', disable_parallel_tool_use: true } }),
    );
    expect(body.parallel_tool_calls).toBe(false);
  });

  it('asks for reasoning with a summary when thinking is on, and maps effort', () => {
    const enabled = translateResponsesRequest(
      request({ thinking: { type: 'enabled', budget_tokens: 8000 } }),
    ).body;
    expect(enabled.reasoning).toEqual({ effort: 'medium', summary: 'auto' });
    const adaptive = translateResponsesRequest(
      request({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } }),
    ).body;
    expect(adaptive.reasoning).toEqual({ effort: 'high', summary: 'auto' });
    const omitted = translateResponsesRequest(
      request({ thinking: { type: 'enabled', budget_tokens: 1024, display: 'omitted' } }),
    ).body;
    expect(omitted.reasoning).toEqual({ effort: 'low' });
    expect(translateResponsesRequest(request({ output_config: { effort: 'low' } })).body.reasoning).toEqual({
      effort: 'low',
    });
    expect(translateResponsesRequest(request({ thinking: { type: 'disabled' } })).body).not.toHaveProperty(
      'reasoning',
    );
  });

  it('sends structured output as text.format', () => {
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
    const { body } = translateResponsesRequest(
      request({ output_config: { format: { type: 'json_schema', schema } } }),
    );
    expect(body.text).toEqual({ format: { type: 'json_schema', name: 'output', schema, strict: true } });
  });

  it('raises max_tokens below 16 to the smallest limit OpenAI accepts', () => {
    expect(translateResponsesRequest(request({ max_tokens: 1 })).body.max_output_tokens).toBe(16);
    expect(translateResponsesRequest(request({ max_tokens: 17 })).body.max_output_tokens).toBe(17);
  });

  it('translates images, text documents and PDF documents into input parts', () => {
    const { body } = translateResponsesRequest(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
              {
                type: 'document',
                source: { type: 'text', media_type: 'text/plain', data: 'notes' },
                title: 'N',
              },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } },
              { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
            ],
          },
        ],
      }),
    );
    expect(body.input).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_image', image_url: 'data:image/png;base64,iVBOR', detail: 'auto' },
          { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' },
          { type: 'input_text', text: 'N\nnotes' },
          { type: 'input_file', filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBER' },
          { type: 'input_file', file_url: 'https://example.com/a.pdf' },
        ],
      },
    ]);
  });

  it('sends tool results with images as input parts, and marks errors', () => {
    const result: ContentBlockParam = {
      type: 'tool_result',
      tool_use_id: 'c1',
      is_error: true,
      content: [
        { type: 'text', text: 'chart' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
      ],
    };
    const { body } = translateResponsesRequest(
      request({
        tools: [weatherTool],
        messages: [{ role: 'user', content: 'Go' }, weatherCall('c1'), { role: 'user', content: [result] }],
      }),
    );
    expect(body.input.at(-1)).toEqual({
      type: 'function_call_output',
      call_id: 'c1',
      output: [
        { type: 'input_text', text: '[tool error]' },
        { type: 'input_text', text: 'chart' },
        { type: 'input_image', image_url: 'data:image/png;base64,AAA', detail: 'auto' },
      ],
    });
  });

  it('keeps system messages inside messages as system items, after the tool outputs they follow', () => {
    const { body } = translateResponsesRequest(
      request({
        tools: [weatherTool],
        messages: [
          { role: 'system', content: 'first' },
          { role: 'user', content: 'Go' },
          weatherCall('c1'),
          { role: 'system', content: 'late' },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'ok' }] },
        ],
      }),
    );
    expect(body.input.map((item) => `${item.type}:${'role' in item ? item.role : ''}`)).toEqual([
      'message:system',
      'message:user',
      'function_call:',
      'function_call_output:',
      'message:system',
    ]);
  });

  it('applies the chat wire’s shared rules: client tools with their documented schema, search results as text', () => {
    const { body } = translateResponsesRequest(
      request({
        tools: [{ type: 'bash_20250124', name: 'bash' }],
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'search_result',
                source: 'https://example.com/a',
                title: 'A',
                content: [{ type: 'text', text: 'Alpha.' }],
              },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'bash', input: {} }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'call_1',
                content: [
                  {
                    type: 'search_result',
                    source: 'https://example.com/b',
                    title: 'B',
                    content: [{ type: 'text', text: 'Beta.' }],
                  },
                ],
              },
            ],
          },
        ],
      }),
    );
    const bash = body.tools![0]!;
    expect(bash).toMatchObject({ type: 'function', name: 'bash', strict: false });
    expect(bash.description).toMatch(/shell/i);
    expect(bash.parameters).toMatchObject({ type: 'object', properties: { command: { type: 'string' } } });
    expect(body.input[0]).toEqual({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Search result: A\nSource: https://example.com/a\n\nAlpha.' }],
    });
    expect(body.input[2]).toEqual({
      type: 'function_call_output',
      call_id: 'call_1',
      output: 'Search result: B\nSource: https://example.com/b\n\nBeta.',
    });
    expect(refusal({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] })).toMatch(
      /web_search_20250305/,
    );
  });

  it('refuses what the Responses API cannot express, naming the field', () => {
    expect(refusal({ stop_sequences: ['END'] })).toMatch(/stop_sequences.*TPX_WIRE=chat/);
    expect(refusal({ max_tokens: 0 })).toMatch(/max_tokens: 0/);
    expect(
      refusal({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Once upon' },
        ],
      }),
    ).toMatch(/prefill/);
    expect(refusal({ tools: [{ name: 'web_search', type: 'web_search_20250305' }] })).toMatch(/tools\[0\]/);
    expect(refusal({ output_config: { format: { type: 'xml' } } })).toMatch(/output_config\.format/);
    expect(refusal({ tool_choice: { type: 'tool', name: 'nope' }, tools: [weatherTool] })).toMatch(/"nope"/);
  });

  it('sends every caller tool id back as the upstream id it stands for (the codec inverted)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 3 }),
        (providerId, occurrence) => {
          const callerId = encodeToolId(providerId, occurrence, () => 'fresh');
          const { body } = translateResponsesRequest(
            request({
              tools: [weatherTool],
              messages: [
                { role: 'user', content: 'Go' },
                {
                  role: 'assistant',
                  content: [{ type: 'tool_use', id: callerId, name: 'get_weather', input: {} }],
                },
                { role: 'user', content: [{ type: 'tool_result', tool_use_id: callerId, content: 'ok' }] },
              ],
            }),
          );
          const callIds = body.input.flatMap((item) => ('call_id' in item ? [item.call_id] : []));
          // A first occurrence goes back as the provider gave it, a repeat under the caller's id.
          const wireId = occurrence === 1 ? providerId : callerId;
          expect(callIds).toEqual([wireId, wireId]);
        },
      ),
      { numRuns: 300 },
    );
  });
});
