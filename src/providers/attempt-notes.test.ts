import { describe, expect, it } from 'vitest';
import { noteUpstreamModel, withNotedHeaders, type AttemptNotes } from './attempt-notes.js';

describe('noteUpstreamModel', () => {
  it('records a model name on the notes', () => {
    const notes: AttemptNotes = {};
    noteUpstreamModel(notes, 'served-model');
    expect(notes).toStrictEqual({ upstreamModel: 'served-model' });
  });

  it('records nothing that is not a name, and needs no notes', () => {
    const notes: AttemptNotes = {};
    noteUpstreamModel(notes, 42);
    noteUpstreamModel(notes, undefined);
    expect(notes).toStrictEqual({});
    expect(() => noteUpstreamModel(undefined, 'm')).not.toThrow();
  });
});

describe('withNotedHeaders', () => {
  it("adds the notes' headers beneath the provider's own, to the attempt's own headers", () => {
    const headers = { authorization: 'Bearer t', accept: 'application/json' };
    const merged = withNotedHeaders(headers, {
      headers: { traceparent: 'tp', authorization: 'Bearer stolen', tracestate: 'v=1' },
    });
    expect(merged).toStrictEqual({
      traceparent: 'tp',
      tracestate: 'v=1',
      authorization: 'Bearer t',
      accept: 'application/json',
    });
    expect(merged).toBe(headers);
  });

  it('hands back the same headers when there are no notes or no noted headers', () => {
    const headers = { accept: 'application/json' };
    expect(withNotedHeaders(headers, undefined)).toBe(headers);
    expect(withNotedHeaders(headers, { upstreamModel: 'm' })).toBe(headers);
  });
});
