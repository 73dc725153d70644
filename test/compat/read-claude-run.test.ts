/**
 * The readers behind the compatibility test's verdicts, on stream-json events shaped as Claude Code
 * 2.1.332 writes them: a cell passes only on the evidence the checks name, and a run without it fails.
 */
import { describe, expect, it } from 'vitest';
import { readContextTokens, readExchangeLog, readSession } from './read-claude-run.js';

const init = { type: 'system', subtype: 'init', tools: ['Read'] };
const toolUse = (id: string) => ({
  type: 'assistant',
  message: { content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: 'notes.txt' } }] },
});
const toolResult = (id: string) => ({
  type: 'user',
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'text' }] },
});
const answer = { type: 'assistant', message: { content: [{ type: 'text', text: 'Done.' }] } };
const success = {
  type: 'result',
  subtype: 'success',
  is_error: false,
  stop_reason: 'end_turn',
  result: 'Done.',
};

describe('readSession', () => {
  it('sees a round trip: a tool_use, its tool_result, then an answer', () => {
    const reading = readSession([init, toolUse('call_1'), toolResult('call_1'), answer, success]);
    expect(reading.started).toBe(true);
    expect(reading.toolCalls).toEqual([{ id: 'call_1', name: 'Read' }]);
    expect(reading.toolRoundTrip).toBe(true);
    expect(reading.result).toMatchObject({ subtype: 'success', isError: false });
  });

  it('sees no round trip when the result answers another id', () => {
    expect(readSession([init, toolUse('call_1'), toolResult('call_2'), answer]).toolRoundTrip).toBe(false);
  });

  it('sees no round trip when the model never answered the tool result', () => {
    expect(readSession([init, toolUse('call_1'), toolResult('call_1')]).toolRoundTrip).toBe(false);
  });

  it('sees no start and no result in an empty output', () => {
    const reading = readSession([]);
    expect(reading.started).toBe(false);
    expect(reading.result).toBeUndefined();
  });

  it('reads an error result as one', () => {
    const failed = { type: 'result', subtype: 'error_during_execution', is_error: true, result: 'API Error' };
    expect(readSession([init, failed]).result).toMatchObject({
      subtype: 'error_during_execution',
      isError: true,
    });
  });
});

describe('readContextTokens', () => {
  it('takes context_usage.total_tokens from the event that carries the report', () => {
    expect(readContextTokens([{ type: 'assistant', context_usage: { total_tokens: 11_114 } }])).toBe(11_114);
  });

  it('falls back to the report line of the result', () => {
    const result = { type: 'result', result: '## Context Usage\n\n**Tokens:** 11.1k / 1m (1%)\n' };
    expect(readContextTokens([result])).toBe(11_100);
  });

  it('finds no count in an answer that is not the report', () => {
    expect(readContextTokens([{ type: 'result', result: 'Unknown command: /context' }])).toBeUndefined();
  });
});

describe('readExchangeLog', () => {
  it('keeps the exchange lines of a pino log, with their errors', () => {
    const log = [
      '{"level":30,"msg":"listening","url":"http://127.0.0.1:1"}',
      '{"level":30,"msg":"exchange","path":"/v1/messages","status":200}',
      'not json',
      '{"level":30,"msg":"exchange","path":"/v1/messages/count_tokens","status":400,"error":"MODEL_EINVAL","errorMessage":"bad"}',
    ].join('\n');
    expect(readExchangeLog(log)).toEqual([
      { path: '/v1/messages', status: 200 },
      { path: '/v1/messages/count_tokens', status: 400, error: 'MODEL_EINVAL', errorMessage: 'bad' },
    ]);
  });
});
