import { describe, expect, it } from 'vitest';
import { encodeSseEvent, encodeSseFrame } from './write-sse.js';

describe('encodeSseFrame', () => {
  it('writes an event line, a data line and a blank line', () => {
    expect(encodeSseFrame('ping', '{"type": "ping"}')).toBe('event: ping\ndata: {"type": "ping"}\n\n');
  });

  it('splits multi-line data into one data line per line, whatever the line ending', () => {
    expect(encodeSseFrame('note', 'a\nb\r\nc\rd')).toBe(
      'event: note\ndata: a\ndata: b\ndata: c\ndata: d\n\n',
    );
  });

  it('refuses an event name with a line feed or a carriage return', () => {
    expect(() => encodeSseFrame('ping\ndata: forged', '{}')).toThrow(TypeError);
    expect(() => encodeSseFrame('ping\r', '{}')).toThrow(/line break/);
  });
});

describe('encodeSseEvent', () => {
  it('uses the event type as the event name and its JSON as the data', () => {
    const event = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'a\nb' } };
    expect(encodeSseEvent(event)).toBe(
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\\nb"}}\n\n',
    );
  });

  it('refuses an event whose type holds a line break', () => {
    expect(() => encodeSseEvent({ type: 'message_stop\n\nevent: error' })).toThrow(TypeError);
  });
});
