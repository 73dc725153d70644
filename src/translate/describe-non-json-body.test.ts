import { describe, expect, it } from 'vitest';
import { describeNonJsonBody, reasonPhrase } from './describe-non-json-body.js';

describe('describeNonJsonBody', () => {
  it('says the body was empty, with nothing to classify by', () => {
    expect(describeNonJsonBody(502, '  \n', 'text/plain')).toStrictEqual({
      message: 'upstream answered 502 Bad Gateway with an empty body',
      text: '',
    });
  });

  it('names the media type in lower case without its parameters', () => {
    expect(describeNonJsonBody(500, 'boom', ' Text/Plain ; charset=utf-8')).toStrictEqual({
      message: 'upstream answered 500 Internal Server Error with a text/plain body, not JSON (boom)',
      text: 'boom',
    });
  });

  it('calls a body without a content type non-JSON, and reads HTML only from a leading tag', () => {
    expect(describeNonJsonBody(500, 'error: <html> was here', undefined)).toStrictEqual({
      message:
        'upstream answered 500 Internal Server Error with a non-JSON body, not JSON (error: <html> was here)',
      text: 'error: <html> was here',
    });
    expect(describeNonJsonBody(500, '<html><title>Oops</title></html>', undefined).message).toBe(
      'upstream answered 500 Internal Server Error with an HTML body, not JSON — is the base URL right? (Oops)',
    );
  });

  it('gives a status without a known reason phrase alone', () => {
    expect(reasonPhrase(418)).toBe('');
    expect(describeNonJsonBody(418, '', undefined).message).toBe('upstream answered 418 with an empty body');
  });
});
