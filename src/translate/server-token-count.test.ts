import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../protocol/chat-completions.js';
import {
  applyTemplateBody,
  llamaCppTokenizeBody,
  readTemplatedPrompt,
  readTokenListLength,
  readVllmTokenCount,
  serverRootUrl,
  vllmTokenizeBody,
} from './server-token-count.js';

const TOOL = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
} as const;

function chatRequest(extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return {
    model: 'qwen-test',
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 64,
    ...extra,
  };
}

describe('serverRootUrl', () => {
  it('drops a trailing /v1 so the counting routes are reached at the server root', () => {
    expect(serverRootUrl('http://127.0.0.1:8080/v1')).toBe('http://127.0.0.1:8080');
  });

  it('drops trailing slashes before the /v1', () => {
    expect(serverRootUrl('http://127.0.0.1:8080/v1//')).toBe('http://127.0.0.1:8080');
    expect(serverRootUrl('http://127.0.0.1:8080/')).toBe('http://127.0.0.1:8080');
  });

  it('keeps a path that does not end in /v1', () => {
    expect(serverRootUrl('http://127.0.0.1:8080/v1/models')).toBe('http://127.0.0.1:8080/v1/models');
    expect(serverRootUrl('http://127.0.0.1:8080/proxy/v1')).toBe('http://127.0.0.1:8080/proxy');
    expect(serverRootUrl('http://127.0.0.1:8080/v10')).toBe('http://127.0.0.1:8080/v10');
  });
});

describe('applyTemplateBody', () => {
  it('is the chat body without the streaming fields, which the template route does not take', () => {
    const body = chatRequest({ stream: true, stream_options: { include_usage: true }, temperature: 0 });
    expect(applyTemplateBody(body)).toStrictEqual({
      model: 'qwen-test',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 64,
      temperature: 0,
    });
  });
});

describe('readTemplatedPrompt', () => {
  it('reads the prompt string', () => {
    expect(readTemplatedPrompt({ prompt: '<|im_start|>user\nhello' })).toBe('<|im_start|>user\nhello');
    expect(readTemplatedPrompt({ prompt: '' })).toBe('');
  });

  it('gives undefined for an answer without a prompt string', () => {
    expect(readTemplatedPrompt({ prompt: 3 })).toBeUndefined();
    expect(readTemplatedPrompt({})).toBeUndefined();
    expect(readTemplatedPrompt('prompt')).toBeUndefined();
    expect(readTemplatedPrompt(null)).toBeUndefined();
  });
});

describe('llamaCppTokenizeBody', () => {
  it('asks for the special tokens to be added and parsed, as the server would for the prompt', () => {
    expect(llamaCppTokenizeBody('<s>hi')).toStrictEqual({
      content: '<s>hi',
      add_special: true,
      parse_special: true,
    });
  });
});

describe('readTokenListLength', () => {
  it('counts the tokens in the list', () => {
    expect(readTokenListLength({ tokens: [1, 2, 3] })).toBe(3);
    expect(readTokenListLength({ tokens: [] })).toBe(0);
  });

  it('gives undefined for an answer without a token list', () => {
    expect(readTokenListLength({ tokens: '123' })).toBeUndefined();
    expect(readTokenListLength({ count: 3 })).toBeUndefined();
    expect(readTokenListLength([1, 2, 3])).toBeUndefined();
    expect(readTokenListLength(undefined)).toBeUndefined();
  });
});

describe('vllmTokenizeBody', () => {
  it('carries the model, messages and tools and asks for the generation prompt', () => {
    const body = chatRequest({ tools: [TOOL], stream: true, temperature: 0.5 });
    expect(vllmTokenizeBody(body)).toStrictEqual({
      model: 'qwen-test',
      messages: [{ role: 'user', content: 'hello' }],
      tools: [TOOL],
      add_generation_prompt: true,
    });
  });

  it('leaves tools out when the request has none', () => {
    expect(vllmTokenizeBody(chatRequest())).toStrictEqual({
      model: 'qwen-test',
      messages: [{ role: 'user', content: 'hello' }],
      add_generation_prompt: true,
    });
  });
});

describe('readVllmTokenCount', () => {
  it('reads a whole, non-negative count', () => {
    expect(readVllmTokenCount({ count: 42 })).toBe(42);
    expect(readVllmTokenCount({ count: 0 })).toBe(0);
  });

  it('gives undefined for a count that is not a whole non-negative number', () => {
    expect(readVllmTokenCount({ count: -1 })).toBeUndefined();
    expect(readVllmTokenCount({ count: 1.5 })).toBeUndefined();
    expect(readVllmTokenCount({ count: '42' })).toBeUndefined();
    expect(readVllmTokenCount({ tokens: [1] })).toBeUndefined();
    expect(readVllmTokenCount(42)).toBeUndefined();
  });
});
