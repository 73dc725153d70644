import { describe, expect, it } from 'vitest';
import { isEventStream, isJson, mediaTypeOf } from './media-type.js';

describe('mediaTypeOf', () => {
  it('gives the lower-case type without parameters or surrounding spaces', () => {
    expect(mediaTypeOf(' Text/Event-Stream ; charset=UTF-8')).toBe('text/event-stream');
    expect(mediaTypeOf('Application/JSON')).toBe('application/json');
    expect(mediaTypeOf('  application/json  ')).toBe('application/json');
  });

  it('gives an empty string for no content type', () => {
    expect(mediaTypeOf(undefined)).toBe('');
    expect(mediaTypeOf('')).toBe('');
  });
});

describe('isEventStream', () => {
  it('accepts text/event-stream in any case and with parameters', () => {
    expect(isEventStream('TEXT/EVENT-STREAM; charset=utf-8')).toBe(true);
  });

  it('refuses other types and a missing one', () => {
    expect(isEventStream('text/plain')).toBe(false);
    expect(isEventStream('text/event-streams')).toBe(false);
    expect(isEventStream(undefined)).toBe(false);
  });
});

describe('isJson', () => {
  it('accepts application/json and application/*+json types', () => {
    expect(isJson('application/json; charset=utf-8')).toBe(true);
    expect(isJson('Application/Problem+JSON')).toBe(true);
    expect(isJson('application/vnd.api+json')).toBe(true);
  });

  it('refuses +json types outside application/ and types that only contain json', () => {
    expect(isJson('text/vnd.x+json')).toBe(false);
    expect(isJson('application/jsonp')).toBe(false);
    expect(isJson('application/json-seq')).toBe(false);
    expect(isJson('text/html')).toBe(false);
    expect(isJson(undefined)).toBe(false);
  });
});
