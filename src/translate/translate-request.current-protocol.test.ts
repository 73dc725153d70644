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
