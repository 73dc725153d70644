import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import type { MessageParam, MessagesRequest } from '../protocol/messages.js';
import { checkToolIdCollisions } from './check-tool-id-collisions.js';
import { encodeToolId } from './tool-id-codec.js';

const noId = (): string => {
  throw new Error('no id is generated here');
};
/** The caller id a second `call_abc` in one response was given. */
const REPEATED = encodeToolId('call_abc', 2, noId);
/** The caller id of an upstream id that is not a valid Messages id. */
const ENCODED = encodeToolId('functions.read:0', 1, noId);
/** An id made up to stand for the same upstream id as `REPEATED`: the encoded form of that very string. */
const LOOKALIKE = encodeToolId(REPEATED, 1, noId);

function request(messages: MessageParam[]): MessagesRequest {
  return { model: 'claude-test', max_tokens: 16, messages };
}

const toolUse = (id: string) => ({ type: 'tool_use' as const, id, name: 'get_weather', input: {} });
const toolResult = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'sunny' });

function thrown(action: () => void): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('checkToolIdCollisions', () => {
  it('accepts a call and its result under the same id, and ids that decode to different upstream ids', () => {
    expect(() =>
      checkToolIdCollisions(
        request([
          { role: 'user', content: 'weather?' },
          {
            role: 'assistant',
            content: [{ type: 'text', text: 'checking' }, toolUse('call_abc'), toolUse(ENCODED)],
          },
          { role: 'user', content: [toolResult('call_abc'), toolResult(ENCODED), toolResult('call_xyz')] },
        ]),
      ),
    ).not.toThrow();
  });

  it('accepts the ids a provider that repeated one id gave its calls: each stands for an upstream id of its own', () => {
    expect(() =>
      checkToolIdCollisions(
        request([
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: [toolUse('call_abc'), toolUse(REPEATED)] },
          { role: 'user', content: [toolResult('call_abc'), toolResult(REPEATED)] },
        ]),
      ),
    ).not.toThrow();
  });

  it('refuses two caller ids that stand for one upstream id, naming both, where they are, and the shared id', () => {
    const error = thrown(() =>
      checkToolIdCollisions(
        request([
          { role: 'user', content: 'weather?' },
          { role: 'assistant', content: [toolUse(REPEATED)] },
          { role: 'user', content: [toolResult(REPEATED), toolResult(LOOKALIKE)] },
        ]),
      ),
    );
    expect(isTransportError(error)).toBe(true);
    if (!isTransportError(error)) return;
    expect([error.code, error.status, error.retryable]).toStrictEqual(['MODEL_EINVAL', 400, false]);
    expect(error.message).toBe(
      `messages.2.content.1: the tool id ${JSON.stringify(LOOKALIKE)} and ${JSON.stringify(REPEATED)} ` +
        `(messages.1.content.0) both stand for the upstream tool-call id ${JSON.stringify(REPEATED)}; the ` +
        'upstream would receive one id for two different calls. Keep the tool ids as they were received, ' +
        'or give each call an id of its own',
    );
  });

  it('reads the ids of tool calls as well as of tool results', () => {
    const error = thrown(() =>
      checkToolIdCollisions(
        request([{ role: 'assistant', content: [toolUse(LOOKALIKE), toolUse(REPEATED)] }]),
      ),
    );
    expect(
      isTransportError(error) &&
        error.message.startsWith(`messages.0.content.1: the tool id ${JSON.stringify(REPEATED)}`),
    ).toBe(true);
  });

  it('reads no id from blocks other than tool calls and tool results', () => {
    expect(() =>
      checkToolIdCollisions(
        request([
          { role: 'assistant', content: [toolUse(REPEATED)] },
          {
            role: 'user',
            content: [
              { type: 'web_search_tool_result', tool_use_id: LOOKALIKE, content: [] },
              toolResult(REPEATED),
            ],
          },
        ]),
      ),
    ).not.toThrow();
  });

  it('skips string contents and blocks without a string id', () => {
    expect(() =>
      checkToolIdCollisions(
        request([
          { role: 'user', content: 'call_abc' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'call_abc' },
              { type: 'tool_result', tool_use_id: 7 },
              toolResult('call_abc'),
            ],
          },
        ]),
      ),
    ).not.toThrow();
  });
});
