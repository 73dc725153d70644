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
import { DIALECT_NAMES, DIALECTS } from './dialects.js';
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

describe('translateRequest: documents', () => {
  const PDF = { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' } as const;
  const userWith = (...content: Record<string, unknown>[]): MessagesRequest =>
    request({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Read this' }, ...content] as never }],
    });

  it('sends a base64 PDF to OpenAI as a file part named after the title', () => {
    const body = translateChecked(userWith({ type: 'document', title: 'report.pdf', source: PDF }), {
      dialect: DIALECTS.openai,
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Read this' },
          {
            type: 'file',
            file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
          },
        ],
      },
    ]);
  });

  it('names an untitled PDF document.pdf, for the generic dialect too', () => {
    const body = translateChecked(userWith({ type: 'document', source: PDF }));
    expect(body.messages[0]!.content).toContainEqual({
      type: 'file',
      file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
    });
  });

  it('sends a PDF by URL to OpenRouter, which fetches it', () => {
    const body = translateChecked(
      userWith({ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }),
      { dialect: DIALECTS.openrouter },
    );
    expect(body.messages[0]!.content).toContainEqual({
      type: 'file',
      file: { filename: 'document.pdf', file_data: 'https://example.com/a.pdf' },
    });
  });

  it('refuses a PDF by URL on OpenAI, whose Chat Completions take only file data', () => {
    expect(
      refusal(userWith({ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }), {
        dialect: DIALECTS.openai,
      }),
    ).toBe(
      'messages[0].content[1]: a document block holding a PDF by URL cannot be sent to OpenAI (api.openai.com) ' +
        '(dialect "openai"), which takes no file content parts; send the text of the document (source type ' +
        '"text"), or use the anthropic provider',
    );
  });

  it.each(DIALECT_NAMES.filter((name) => !['openai', 'openrouter', 'openai-generic'].includes(name)))(
    'refuses a base64 PDF on the %s dialect, naming it',
    (name) => {
      expect(refusal(userWith({ type: 'document', source: PDF }), { dialect: DIALECTS[name] })).toContain(
        `(dialect "${name}"), which takes no file content parts`,
      );
    },
  );

  it('refuses a Files API document on every dialect, naming the dialect', () => {
    expect(
      refusal(userWith({ type: 'document', source: { type: 'file', file_id: 'file_011' } }), {
        dialect: DIALECTS.openrouter,
      }),
    ).toBe(
      'messages[0].content[1]: a document with source type "file" refers to the Anthropic Files API, which ' +
        'OpenRouter (openrouter.ai) (dialect "openrouter") cannot read; send the document itself (base64 or ' +
        'text), or use the anthropic provider',
    );
  });

  it('refuses base64 data that is not a PDF', () => {
    expect(
      refusal(
        userWith({ type: 'document', source: { type: 'base64', media_type: 'text/csv', data: 'YQ==' } }),
      ),
    ).toBe(
      'messages[0].content[1]: a base64 document must be a PDF (media_type "application/pdf") with string data, ' +
        'got media_type "text/csv"',
    );
  });

  it('heads a plain-text document with its title and context', () => {
    const body = translate(
      userWith({
        type: 'document',
        title: 'Notes',
        context: 'Written in 2024',
        citations: { enabled: true },
        source: { type: 'text', media_type: 'text/plain', data: 'body' },
      }),
    );
    expect(body.messages[0]!.content).toContainEqual({ type: 'text', text: 'Notes\nWritten in 2024\nbody' });
  });

  it('turns a content document into its text, then its images', () => {
    const body = translateChecked(
      userWith({
        type: 'document',
        title: 'Slides',
        source: {
          type: 'content',
          content: [
            { type: 'text', text: 'one' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/i.png' } },
            { type: 'text', text: 'two' },
          ],
        },
      }),
    );
    expect(body.messages[0]!.content).toEqual([
      { type: 'text', text: 'Read this' },
      { type: 'text', text: 'Slides\none\n\ntwo' },
      { type: 'image_url', image_url: { url: 'https://example.com/i.png' } },
    ]);
  });

  it('sends a PDF from a tool result in a user message after the tool message', () => {
    const body = translateChecked(
      request({
        messages: [
          { role: 'user', content: 'Fetch it' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'fetch', input: {} }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'call_1',
                content: [
                  { type: 'text', text: 'Here it is' },
                  { type: 'document', title: 'a.pdf', source: PDF },
                ],
              },
            ],
          },
        ],
        tools: [{ name: 'fetch', input_schema: { type: 'object' } }],
      }),
      { dialect: DIALECTS.openai },
    );
    expect(body.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'Here it is' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Files from the result of tool call call_1:' },
          {
            type: 'file',
            file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' },
          },
        ],
      },
    ]);
  });
});

describe('translateRequest: search results', () => {
  const SEARCH_RESULT = {
    type: 'search_result',
    source: 'https://example.com/guide',
    title: 'The guide',
    citations: { enabled: true },
    content: [
      { type: 'text', text: 'First paragraph.' },
      { type: 'text', text: 'Second paragraph.' },
    ],
  };
  const EXPECTED_TEXT =
    'Search result: The guide\nSource: https://example.com/guide\n\nFirst paragraph.\n\nSecond paragraph.';

  it('turns a top-level search_result into text with its title and source', () => {
    const body = translateChecked(request({ messages: [{ role: 'user', content: [SEARCH_RESULT] }] }));
    expect(body.messages).toEqual([{ role: 'user', content: EXPECTED_TEXT }]);
  });

  it('turns a search_result inside a tool_result into the tool message text', () => {
    const body = translateChecked(
      request({
        tools: [{ name: 'search', input_schema: { type: 'object' } }],
        messages: [
          { role: 'user', content: 'Look it up' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'search', input: {} }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'call_1', content: [SEARCH_RESULT] }],
          },
        ],
      }),
    );
    expect(body.messages[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: EXPECTED_TEXT });
  });

  it('refuses a search_result without a source, naming its position', () => {
    expect(
      refusal(
        request({
          messages: [{ role: 'user', content: [{ ...SEARCH_RESULT, source: undefined }] as never }],
        }),
      ),
    ).toBe('messages[0].content[0]: a search_result block needs a string source and a string title');
  });
});

describe('translateRequest: prompt caching', () => {
  const CACHED: MessagesRequest = {
    model: 'claude-test',
    max_tokens: 100,
    cache_control: { type: 'ephemeral', ttl: '1h' },
    system: [
      { type: 'text', text: 'You are terse.' },
      { type: 'text', text: 'A long, stable preamble.', cache_control: { type: 'ephemeral' } },
    ],
    tools: [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral', ttl: '5m' } },
        ],
      },
    ],
  };

  it('forwards cache_control to OpenRouter on system and user text parts and at the top level', () => {
    const body = translate(CACHED, { dialect: DIALECTS.openrouter });
    expect(body.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(body.messages).toEqual([
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You are terse.' },
          { type: 'text', text: 'A long, stable preamble.', cache_control: { type: 'ephemeral' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'A long document.', cache_control: { type: 'ephemeral', ttl: '5m' } },
        ],
      },
    ]);
    // OpenRouter documents the marker on content parts only: a tool's marker is dropped.
    expect(body.tools).toEqual([
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } },
    ]);
  });

  it.each(DIALECT_NAMES.filter((name) => name !== 'openrouter'))(
    'drops cache_control on the %s dialect',
    (name) => {
      const body = translate(CACHED, { dialect: DIALECTS[name] });
      expect(body.cache_control).toBeUndefined();
      expect(body.messages).toEqual([
        { role: 'system', content: 'You are terse.\n\nA long, stable preamble.' },
        { role: 'user', content: 'A long document.' },
      ]);
    },
  );

  it('ignores a cache_control of an unknown type', () => {
    const body = translate(
      { ...CACHED, cache_control: { type: 'persistent' }, system: 'Plain' },
      { dialect: DIALECTS.openrouter },
    );
    expect(body.cache_control).toBeUndefined();
    expect(body.messages[0]).toEqual({ role: 'system', content: 'Plain' });
  });
});
