import { describe, expect, it } from 'vitest';
import { isTransportError } from '../errors.js';
import { chatRequestWire } from './chat-request-wire.js';
import { DIALECTS, type DialectProfile } from './dialects.js';
import { RESPONSES_REQUEST_WIRE } from './encode-responses-request.js';
import { isTextPart, mapDocumentBlock, mapImageSource, mapSearchResultBlock } from './map-document-block.js';
import type { ImagePart } from './neutral-request.js';

const PATH = 'messages[0].content[1]';
const PDF = { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' };
const PDF_URL = { type: 'url', url: 'https://example.com/a.pdf' };

/** The image part of an image at `url`. */
const imagePart = (url: string): ImagePart => ({ type: 'image', url });

/** What a Chat Completions server of the dialect takes of documents (none: the generic one). */
const chat = (dialect?: DialectProfile) => chatRequestWire(dialect).documents;

/** The refusal `action` throws: code, status and message. */
function refusal(action: () => unknown): { code: string; status: number; message: string } | undefined {
  try {
    action();
  } catch (error) {
    if (isTransportError(error)) return { code: error.code, status: error.status, message: error.message };
    throw error;
  }
  return undefined;
}

describe('mapDocumentBlock: text and content sources', () => {
  it('heads a text document with its title and context lines', () => {
    expect(
      mapDocumentBlock(
        {
          type: 'document',
          title: 'notes',
          context: 'from the wiki',
          source: { type: 'text', data: 'Body.' },
        },
        PATH,
        chat(),
      ),
    ).toStrictEqual([{ type: 'text', text: 'notes\nfrom the wiki\nBody.' }]);
  });

  it('gives a text document without title or context (or with empty ones) no heading', () => {
    expect(mapDocumentBlock({ source: { type: 'text', data: 'Body.' } }, PATH, chat())).toStrictEqual([
      { type: 'text', text: 'Body.' },
    ]);
    expect(
      mapDocumentBlock(
        { title: '', context: 'only context', source: { type: 'text', data: 'Body.' } },
        PATH,
        chat(),
      ),
    ).toStrictEqual([{ type: 'text', text: 'only context\nBody.' }]);
  });

  it('refuses a text document without string data', () => {
    expect(
      refusal(() => mapDocumentBlock({ source: { type: 'text', data: 5 } }, PATH, chat())),
    ).toStrictEqual({
      code: 'MODEL_EINVAL',
      status: 400,
      message: `${PATH}.source.data must be a string`,
    });
  });

  it('turns a content document into one text part of its texts, then an image part per image', () => {
    expect(
      mapDocumentBlock(
        {
          title: 'slides',
          source: {
            type: 'content',
            content: [
              { type: 'text', text: 'one' },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
              { type: 'text', text: 'two' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
            ],
          },
        },
        PATH,
        chat(DIALECTS.llamacpp),
      ),
    ).toStrictEqual([
      { type: 'text', text: 'slides\none\n\ntwo' },
      imagePart('https://example.com/a.png'),
      imagePart('data:image/png;base64,iVBOR'),
    ]);
  });

  it('takes a content document given as a string', () => {
    expect(
      mapDocumentBlock({ context: 'ctx', source: { type: 'content', content: 'plain' } }, PATH, chat()),
    ).toStrictEqual([{ type: 'text', text: 'ctx\nplain' }]);
  });

  it('refuses content that is neither a string nor a list, and blocks in it other than text and image', () => {
    expect(
      refusal(() => mapDocumentBlock({ source: { type: 'content', content: 3 } }, PATH, chat()))?.message,
    ).toBe(`${PATH}.source.content must be a string or an array of blocks`);
    for (const inner of [{ type: 'text', text: 7 }, { type: 'tool_use' }, 'text', null]) {
      expect(
        refusal(() =>
          mapDocumentBlock(
            { source: { type: 'content', content: [{ type: 'text', text: 'a' }, inner] } },
            PATH,
            chat(),
          ),
        )?.message,
      ).toBe(`${PATH}.source.content[1]: a document's content may hold only text and image blocks`);
    }
  });
});

describe('mapDocumentBlock: PDF sources', () => {
  it('sends a base64 PDF as a file part named after its title, as a data URL', () => {
    expect(mapDocumentBlock({ title: 'report.pdf', source: PDF }, PATH, chat(DIALECTS.openai))).toStrictEqual(
      [
        {
          type: 'file',
          filename: 'report.pdf',
          url: 'data:application/pdf;base64,JVBERi0xLjQ=',
          isDataUrl: true,
        },
      ],
    );
  });

  it('reads a title or context that is not a string as none', () => {
    expect(
      mapDocumentBlock({ title: 42, context: ['c'], source: { type: 'text', data: 'Body.' } }, PATH, chat()),
    ).toStrictEqual([{ type: 'text', text: 'Body.' }]);
    expect(mapDocumentBlock({ title: 42, source: PDF }, PATH, chat())).toStrictEqual([
      {
        type: 'file',
        filename: 'document.pdf',
        url: 'data:application/pdf;base64,JVBERi0xLjQ=',
        isDataUrl: true,
      },
    ]);
  });

  it('names an untitled PDF document.pdf, and takes no dialect as the generic one', () => {
    expect(mapDocumentBlock({ title: '', source: PDF }, PATH, chat())).toStrictEqual([
      {
        type: 'file',
        filename: 'document.pdf',
        url: 'data:application/pdf;base64,JVBERi0xLjQ=',
        isDataUrl: true,
      },
    ]);
  });

  it('sends a PDF by URL only where the dialect takes one', () => {
    expect(mapDocumentBlock({ source: PDF_URL }, PATH, chat(DIALECTS.openrouter))).toStrictEqual([
      { type: 'file', filename: 'document.pdf', url: 'https://example.com/a.pdf', isDataUrl: false },
    ]);
    expect(refusal(() => mapDocumentBlock({ source: PDF_URL }, PATH, chat()))?.message).toBe(
      `${PATH}: a document block holding a PDF by URL cannot be sent to an OpenAI-compatible server, which takes ` +
        'no file content parts; send the text of the document (source type "text"), or use the anthropic provider',
    );
  });

  it('refuses a base64 PDF on a dialect that takes no files', () => {
    expect(refusal(() => mapDocumentBlock({ source: PDF }, PATH, chat(DIALECTS.mistral)))).toStrictEqual({
      code: 'MODEL_EINVAL',
      status: 400,
      message:
        `${PATH}: a document block holding a base64 PDF cannot be sent to Mistral (api.mistral.ai) (dialect ` +
        '"mistral"), which takes no file content parts; send the text of the document (source type "text"), or ' +
        'use the anthropic provider',
    });
  });

  it('refuses a base64 document that is not a PDF or has no string data', () => {
    const message = (mediaType: string) =>
      `${PATH}: a base64 document must be a PDF (media_type "application/pdf") with string data, got media_type ${mediaType}`;
    expect(
      refusal(() => mapDocumentBlock({ source: { ...PDF, media_type: 'text/csv' } }, PATH, chat()))?.message,
    ).toBe(message('"text/csv"'));
    expect(refusal(() => mapDocumentBlock({ source: { ...PDF, data: 12 } }, PATH, chat()))?.message).toBe(
      message('"application/pdf"'),
    );
  });

  it('refuses a URL source without a string URL', () => {
    expect(
      refusal(() => mapDocumentBlock({ source: { type: 'url' } }, PATH, chat(DIALECTS.openrouter)))?.message,
    ).toBe(`${PATH}.source.url must be a string`);
  });
});

describe('mapDocumentBlock: sources it cannot translate', () => {
  it('refuses a block without a source object', () => {
    for (const block of [{}, { source: 'text' }, { source: null }]) {
      expect(refusal(() => mapDocumentBlock(block, PATH, chat()))?.message).toBe(
        `${PATH}: a document needs a source object`,
      );
    }
  });

  it('refuses a Files API document, naming the dialect', () => {
    expect(
      refusal(() => mapDocumentBlock({ source: { type: 'file', file_id: 'f' } }, PATH, chat(DIALECTS.vllm)))
        ?.message,
    ).toBe(
      `${PATH}: a document with source type "file" refers to the Anthropic Files API, which vLLM (dialect "vllm") ` +
        'cannot read; send the document itself (base64 or text), or use the anthropic provider',
    );
  });

  it('refuses an unknown source type, naming it', () => {
    expect(refusal(() => mapDocumentBlock({ source: { type: 'zip' } }, PATH, chat()))?.message).toBe(
      `${PATH}: a document with source type "zip" cannot be translated; use a text, content, base64 or url source`,
    );
  });
});

describe('mapDocumentBlock: a server that takes files of any kind (the Responses API)', () => {
  const responses = RESPONSES_REQUEST_WIRE.documents;

  it('sends a base64 file of any media type, reading one without a media type as a PDF', () => {
    expect(
      mapDocumentBlock({ source: { type: 'base64', media_type: 'text/csv', data: 'YSxi' } }, PATH, responses),
    ).toStrictEqual([
      { type: 'file', filename: 'document.pdf', url: 'data:text/csv;base64,YSxi', isDataUrl: true },
    ]);
    expect(mapDocumentBlock({ source: { type: 'base64', data: 'JVBER' } }, PATH, responses)).toStrictEqual([
      { type: 'file', filename: 'document.pdf', url: 'data:application/pdf;base64,JVBER', isDataUrl: true },
    ]);
  });

  it('sends a file by URL, and heads a text document as on every wire', () => {
    expect(mapDocumentBlock({ source: PDF_URL }, PATH, responses)).toStrictEqual([
      { type: 'file', filename: 'document.pdf', url: 'https://example.com/a.pdf', isDataUrl: false },
    ]);
    expect(
      mapDocumentBlock(
        { title: 'notes', context: 'wiki', source: { type: 'text', data: 'Body.' } },
        PATH,
        responses,
      ),
    ).toStrictEqual([{ type: 'text', text: 'notes\nwiki\nBody.' }]);
  });

  it('refuses every source it cannot read by its type alone, listing the ones it reads', () => {
    const message = (type: string) =>
      `${PATH}: a document with source type ${type} cannot be translated; use a text, base64 or url source`;
    expect(
      refusal(() => mapDocumentBlock({ source: { type: 'content', content: 'x' } }, PATH, responses))
        ?.message,
    ).toBe(message('"content"'));
    expect(
      refusal(() => mapDocumentBlock({ source: { type: 'file', file_id: 'f' } }, PATH, responses))?.message,
    ).toBe(message('"file"'));
    expect(
      refusal(() => mapDocumentBlock({ source: { type: 'text', data: 5 } }, PATH, responses))?.message,
    ).toBe(message('"text"'));
    expect(refusal(() => mapDocumentBlock({ source: 'x' }, PATH, responses))?.message).toBe(
      message('string'),
    );
  });
});

describe('mapImageSource', () => {
  it('turns base64 into a data URL and keeps a URL as it is', () => {
    expect(mapImageSource({ type: 'base64', media_type: 'image/webp', data: 'UklG' }, PATH)).toStrictEqual(
      imagePart('data:image/webp;base64,UklG'),
    );
    expect(mapImageSource({ type: 'url', url: 'https://example.com/i.png' }, PATH)).toStrictEqual(
      imagePart('https://example.com/i.png'),
    );
  });

  it('refuses any other or malformed source, naming its type', () => {
    const message = (type: string) =>
      `${PATH}: an image with source type ${type} cannot be translated; use a base64 or url source`;
    expect(refusal(() => mapImageSource({ type: 'file', file_id: 'f' }, PATH))?.message).toBe(
      message('"file"'),
    );
    expect(refusal(() => mapImageSource({ type: 'base64', data: 'x' }, PATH))?.message).toBe(
      message('"base64"'),
    );
    expect(refusal(() => mapImageSource({ type: 'base64', media_type: 'image/png' }, PATH))?.message).toBe(
      message('"base64"'),
    );
    expect(refusal(() => mapImageSource({ type: 'url', url: 3 }, PATH))?.message).toBe(message('"url"'));
    expect(refusal(() => mapImageSource('https://example.com/i.png', PATH))?.message).toBe(message('string'));
  });
});

describe('mapSearchResultBlock', () => {
  it('heads the content texts with the title and source', () => {
    expect(
      mapSearchResultBlock(
        {
          source: 'https://example.com/page',
          title: 'Page',
          content: [
            { type: 'text', text: 'first' },
            { type: 'text', text: 'second' },
          ],
        },
        PATH,
      ),
    ).toStrictEqual({
      type: 'text',
      text: 'Search result: Page\nSource: https://example.com/page\n\nfirst\n\nsecond',
    });
  });

  it('refuses a result without a string source and title, or whose content is not text blocks', () => {
    expect(refusal(() => mapSearchResultBlock({ source: 's', content: [] }, PATH))?.message).toBe(
      `${PATH}: a search_result block needs a string source and a string title`,
    );
    expect(refusal(() => mapSearchResultBlock({ title: 't', content: [] }, PATH))?.message).toBe(
      `${PATH}: a search_result block needs a string source and a string title`,
    );
    expect(
      refusal(() => mapSearchResultBlock({ source: 's', title: 't', content: 'x' }, PATH))?.message,
    ).toBe(`${PATH}.content must be an array of text blocks`);
    for (const inner of [{ type: 'image' }, { type: 'text', text: 1 }, 'text']) {
      expect(
        refusal(() =>
          mapSearchResultBlock(
            { source: 's', title: 't', content: [{ type: 'text', text: 'a' }, inner] },
            PATH,
          ),
        )?.message,
      ).toBe(`${PATH}.content[1]: a search result's content may hold only text blocks`);
    }
  });
});

describe('isTextPart', () => {
  it('is true for text parts only', () => {
    expect(isTextPart({ type: 'text', text: 'a' })).toBe(true);
    expect(isTextPart(imagePart('u'))).toBe(false);
  });
});
