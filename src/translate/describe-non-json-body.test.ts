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

describe('describeNonJsonBody: HTML pages', () => {
  it('hints at the base URL for a 404 or 405 page, and not for another plain-text status', () => {
    for (const status of [404, 405]) {
      expect(describeNonJsonBody(status, 'no route', 'text/plain').message).toContain(
        'body, not JSON — is the base URL right? (no route)',
      );
    }
    expect(describeNonJsonBody(403, 'no route', 'text/plain').message).toBe(
      'upstream answered 403 Forbidden with a text/plain body, not JSON (no route)',
    );
  });

  it('quotes the title of a page, without tags or entities', () => {
    expect(
      describeNonJsonBody(
        502,
        '<!DOCTYPE html><title lang="en">Bad &lt;b&gt;Gate&lt;/b&gt; <em>way</em></title>',
        'text/html',
      ).text,
    ).toBe('Bad <b>Gate</b> way');
  });

  it('quotes the text of a page with an empty title, without scripts, styles, comments or entities', () => {
    const page =
      '<html><head><title> </title><style>p { color: red }</style><script type="x">alert(1)</script ></head>' +
      '<body><!-- a comment --><p>Say &quot;hi&quot;, it&#39;s&nbsp;&apos;fine&apos; &amp; more</p></body></html>';
    expect(describeNonJsonBody(500, page, 'text/html').text).toBe(`Say "hi", it's 'fine' & more`);
  });

  it('reads a page as HTML from its first tag only, in any case', () => {
    expect(describeNonJsonBody(500, '<BODY>down</BODY>', undefined).text).toBe('down');
    expect(describeNonJsonBody(500, 'x <body>down</body>', undefined).text).toBe('x <body>down</body>');
  });
});
