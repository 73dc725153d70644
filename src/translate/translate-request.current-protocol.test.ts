/**
 * `translateRequest` on the parts of the Messages protocol added since the first translation tables: the
 * legacy `output_format`, documents and search results, Anthropic-defined client tools, and prompt
 * caching per dialect.
 */
import { describe, expect, it } from 'vitest';
import { assertValidChatCompletionRequest } from '../../test/helpers/chat-schema.js';
import { isTransportError } from '../errors.js';
import type { ChatCompletionRequest } from '../protocol/chat-completions.js';
import type { MessagesRequest } from '../protocol/messages.js';
import { DIALECTS } from './dialects.js';
import { translateRequest, type TranslateRequestOptions } from './translate-request.js';

function translate(request: MessagesRequest, options?: TranslateRequestOptions): ChatCompletionRequest {
  const before = structuredClone(request);
  const { body } = translateRequest(request, options);
  expect(request).toEqual(before);
  return body;
}

/** Like `translate`, and the body must also pass the OpenAI request schema. */
function translateChecked(
  request: MessagesRequest,
  options?: TranslateRequestOptions,
): ChatCompletionRequest {
  const body = translate(request, options);
  assertValidChatCompletionRequest(body);
  return body;
}

function refusal(request: MessagesRequest, options?: TranslateRequestOptions): string {
  try {
    translateRequest(request, options);
  } catch (error) {
    if (isTransportError(error) && error.code === 'MODEL_EINVAL') return error.message;
    throw error;
  }
  throw new Error('the request was translated');
}

function request(overrides: Partial<MessagesRequest> = {}): MessagesRequest {
  return { model: 'claude-test', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...overrides };
}

const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

describe('translateRequest: the legacy output_format', () => {
  it('maps a top-level output_format like output_config.format', () => {
    expect(translateChecked(request({ output_format: { type: 'json_schema', schema: SCHEMA } }))).toEqual({
      model: 'claude-test',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 100,
      response_format: { type: 'json_schema', json_schema: { name: 'output', schema: SCHEMA, strict: true } },
    });
  });

  it('accepts output_format and output_config.format when they say the same', () => {
    const format = { type: 'json_schema', schema: SCHEMA };
    const body = translate(request({ output_format: format, output_config: { format } }));
    expect(body.response_format?.json_schema.schema).toEqual(SCHEMA);
  });

  it('refuses output_format and output_config.format that differ', () => {
    expect(
      refusal(
        request({
          output_format: { type: 'json_schema', schema: SCHEMA },
          output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
        }),
      ),
    ).toBe(
      'output_format and output_config.format are both set and differ; send only output_config.format ' +
        '(output_format is its older name)',
    );
  });

  it('names output_format when refusing a format that is not json_schema', () => {
    expect(refusal(request({ output_format: { type: 'xml' } }))).toBe(
      'output_format of type "xml" cannot be translated; only {"type": "json_schema", "schema": {…}} ' +
        'has a Chat Completions equivalent (response_format)',
    );
  });
});

describe('translateRequest: Anthropic-defined client tools', () => {
  it('offers bash_20250124 as the function "bash" with its documented input schema', () => {
    const body = translateChecked(request({ tools: [{ type: 'bash_20250124', name: 'bash' }] }));
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'bash',
          description: expect.stringContaining('persistent bash shell') as unknown,
          parameters: {
            type: 'object',
            properties: {
              command: { type: 'string', description: expect.any(String) as unknown },
              restart: { type: 'boolean', description: expect.any(String) as unknown },
            },
            required: [],
          },
        },
      },
    ]);
  });

  it('offers text_editor_20250728 as str_replace_based_edit_tool, without undo_edit, inserting insert_text', () => {
    const body = translate(
      request({ tools: [{ type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }] }),
    );
    const fn = body.tools![0]!.function;
    expect(fn.name).toBe('str_replace_based_edit_tool');
    const parameters = fn.parameters as {
      properties: Record<string, { enum?: string[] }>;
      required: string[];
    };
    expect(parameters.properties['command']!.enum).toEqual(['view', 'create', 'str_replace', 'insert']);
    expect(Object.keys(parameters.properties)).toEqual([
      'command',
      'path',
      'file_text',
      'old_str',
      'new_str',
      'insert_text',
      'insert_line',
      'view_range',
    ]);
    expect(parameters.required).toEqual(['command', 'path']);
  });

  it('keeps undo_edit and new_str for inserts in the text editor of the Claude 3 models', () => {
    const body = translate(
      request({ tools: [{ type: 'text_editor_20250124', name: 'str_replace_editor' }] }),
    );
    const parameters = body.tools![0]!.function.parameters as {
      properties: Record<string, { enum?: string[] }>;
    };
    expect(parameters.properties['command']!.enum).toContain('undo_edit');
    expect(parameters.properties['insert_text']).toBeUndefined();
  });

  it('tells the model the display size of a computer tool', () => {
    const body = translate(
      request({
        tools: [
          { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
        ],
      }),
    );
    expect(body.tools![0]!.function.description).toContain('The display is 1024×768 pixels.');
    const parameters = body.tools![0]!.function.parameters as { required: string[] };
    expect(parameters.required).toEqual(['action']);
  });

  it('offers the memory tool, which the caller runs, next to custom tools', () => {
    const body = translateChecked(
      request({
        tools: [
          { type: 'memory_20250818', name: 'memory' },
          { name: 'lookup', input_schema: { type: 'object', properties: {} } },
        ],
        tool_choice: { type: 'tool', name: 'memory' },
      }),
    );
    expect(body.tools!.map((tool) => tool.function.name)).toEqual(['memory', 'lookup']);
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'memory' } });
  });

  it('sends the history of a client tool call under its Anthropic name', () => {
    const body = translate(
      request({
        tools: [{ type: 'bash_20250124', name: 'bash' }],
        messages: [
          { role: 'user', content: 'List the files' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }] },
        ],
      }),
    );
    expect(body.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } },
      ],
    });
  });

  it('still refuses a server tool, naming it, its type and the dialect', () => {
    expect(
      refusal(request({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), {
        dialect: DIALECTS.openrouter,
      }),
    ).toBe(
      'tools[0] ("web_search") has type "web_search_20250305": a server tool that runs on Anthropic\'s side, ' +
        'which OpenRouter (openrouter.ai) (dialect "openrouter") cannot run; remove it, or use the anthropic ' +
        'provider',
    );
  });

  it('refuses an Anthropic-defined type it does not know, as a server tool', () => {
    expect(refusal(request({ tools: [{ type: 'bash_20990101', name: 'bash' }] }))).toContain(
      'tools[0] ("bash") has type "bash_20990101": a server tool',
    );
  });
});
