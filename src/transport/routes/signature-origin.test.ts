import { describe, expect, it } from 'vitest';
import type { MessageStreamEvent } from '../../protocol/messages.js';
import { markEvents, markSignature, requestFor, signatureFor } from './signature-origin.js';

const REASONING = 'tpxr1.WyJzIiwicnNfMSIsImdBQUEiXQ';

describe('thinking signatures across upstreams', () => {
  it('marks reasoning signatures with their upstream and leaves the others alone', () => {
    expect(markSignature(REASONING, 'cloud')).toBe(`tpxu1.cloud.${REASONING}`);
    expect(markSignature('', 'cloud')).toBe('');
    expect(markSignature('EqQBCkgIARABGAIiQL', 'cloud')).toBe('EqQBCkgIARABGAIiQL');
  });

  it('restores a signature for its maker only, and blanks reasoning of unknown origin', () => {
    expect(signatureFor(`tpxu1.cloud.${REASONING}`, 'cloud')).toBe(REASONING);
    expect(signatureFor(`tpxu1.cloud.${REASONING}`, 'local')).toBe('');
    expect(signatureFor(`tpxu1.cloud-2.${REASONING}`, 'cloud')).toBe('');
    expect(signatureFor(REASONING, 'cloud')).toBe('');
    expect(signatureFor('EqQBCkgIARABGAIiQL', 'cloud')).toBe('EqQBCkgIARABGAIiQL');
  });

  it('changes only the thinking blocks of assistant turns, and returns the request itself when none change', () => {
    const untouched = { model: 'm', max_tokens: 8, messages: [{ role: 'user' as const, content: 'Hi' }] };
    expect(requestFor(untouched, 'local')).toBe(untouched);
    const crossed = requestFor(
      {
        model: 'm',
        max_tokens: 8,
        messages: [
          { role: 'user', content: 'Hi' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Plan.', signature: `tpxu1.cloud.${REASONING}` },
              { type: 'text', text: 'Done.' },
            ],
          },
        ],
      },
      'local',
    );
    expect(crossed.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Plan.', signature: '' },
        { type: 'text', text: 'Done.' },
      ],
    });
  });

  it('marks signatures in stream events', () => {
    const events = [
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: REASONING } },
    ] as MessageStreamEvent[];
    markEvents(events, 'cloud');
    expect(events[1]).toEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta', signature: `tpxu1.cloud.${REASONING}` },
    });
  });
});
