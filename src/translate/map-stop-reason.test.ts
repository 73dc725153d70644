import { describe, expect, it } from 'vitest';
import { mapFinishReason } from './map-stop-reason.js';

describe('mapFinishReason', () => {
  it.each([
    // [finish_reason, saw tool calls, stop_reason]
    ['stop', false, 'end_turn'],
    ['stop', true, 'tool_use'],
    ['length', false, 'max_tokens'],
    ['length', true, 'max_tokens'],
    ['tool_calls', true, 'tool_use'],
    ['tool_calls', false, 'tool_use'],
    ['function_call', false, 'tool_use'],
    ['content_filter', false, 'refusal'],
    ['content_filter', true, 'refusal'],
    [null, false, 'end_turn'],
    [undefined, false, 'end_turn'],
    [null, true, 'tool_use'],
    ['eos', false, 'end_turn'],
    ['', false, 'end_turn'],
    ['error', false, 'end_turn'],
  ] as const)('maps finish_reason %j (tool calls: %s) to %s', (finishReason, sawToolCalls, expected) => {
    expect(mapFinishReason(finishReason, sawToolCalls)).toBe(expected);
  });

  it('maps a Gemini-style stop after tool calls to tool_use (quirk 6)', () => {
    expect(mapFinishReason('stop', true)).toBe('tool_use');
  });

  it('never produces the reasons translation has no source for', () => {
    const inputs = ['stop', 'length', 'tool_calls', 'function_call', 'content_filter', null, undefined, 'x'];
    const produced = new Set(
      inputs.flatMap((input) => [true, false].map((saw) => mapFinishReason(input, saw))),
    );
    expect(produced).not.toContain('stop_sequence');
    expect(produced).not.toContain('pause_turn');
    expect(produced).not.toContain('model_context_window_exceeded');
  });
});
