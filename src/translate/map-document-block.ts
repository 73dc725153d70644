/**
 * `document`, `image` and `search_result` blocks → wire-neutral content parts (`neutral-request.ts`), as
 * far as the wire's server takes them (`DocumentTarget`). Pure.
 *
 * | document source                      | becomes                                                                  |
 * |--------------------------------------|--------------------------------------------------------------------------|
 * | `text` (plain text)                  | a text part: title, context, then the text                               |
 * | `content` (text and image blocks)    | a text part (title, context, the texts), then an image part per image     |
 * | `base64` PDF                         | a file part (a `data:` URL) where the server takes one                   |
 * | `url` (a PDF on the web)             | a file part by URL where the server takes one                            |
 * | `file` (an Anthropic Files API id)   | refused everywhere: the id means nothing to another server               |
 *
 * Which servers take which files is the wire's to say: per dialect on Chat Completions
 * (`chat-request-wire.ts`), always on the Responses API, whose `input_file` also takes files other than
 * PDFs.
 *
 * A `search_result` block becomes a text part carrying its title, source and content, so the model
 * still sees where the text came from.
 *
 * `citations` settings on documents and search results are dropped: no OpenAI-compatible server
 * returns Anthropic citations (`char_location`, `page_location`, `search_result_location`), so there is
 * nothing to turn them on for.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import { invalidRequest } from './invalid-request.js';
import type { ContentPart, FilePart, ImagePart, TextPart } from './neutral-request.js';

/** A document source type a wire may read. */
export type DocumentSourceType = 'text' | 'content' | 'base64' | 'url';

/** What a wire's server takes of documents, and how refusals of the rest name it. */
export interface DocumentTarget {
  /** The server, as refusals name it: `vLLM (dialect "vllm")`. */
  readonly server: string;
  /** The source types the wire reads, in the order a refusal lists them. */
  readonly sourceTypes: readonly DocumentSourceType[];
  /** Whether the server takes a PDF as a file part from base64 data, and from a URL. */
  readonly takesBase64Files: boolean;
  readonly takesFileUrls: boolean;
  /**
   * Whether a base64 file may have any media type (one without is read as a PDF); otherwise it must be
   * `application/pdf`.
   */
  readonly takesAnyFileType: boolean;
  /**
   * Whether a refusal says what is wrong with a source; otherwise it names the source type and lists
   * `sourceTypes`.
   */
  readonly explainsRefusals: boolean;
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The title and context lines that head a document's text, then a line break, when there are any. */
function heading(block: Record<string, unknown>): string {
  const lines = [nonEmptyString(block['title']), nonEmptyString(block['context'])].filter(
    (line): line is string => line !== undefined,
  );
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * The content parts for a `document` block (see the module table).
 *
 * @param path where the block sits, for error messages (`messages[0].content[1]`)
 * @throws TransportError `MODEL_EINVAL` naming the block, its source and the server, for a source the
 *   server cannot take or a block that is malformed.
 */
export function mapDocumentBlock(documentBlock: object, path: string, target: DocumentTarget): ContentPart[] {
  // Only the block's `type` was validated: every other field is read as unknown.
  const block = documentBlock as Record<string, unknown>;
  const source = block['source'];
  const refuse = (explanation: string): never =>
    invalidRequest(target.explainsRefusals ? explanation : unreadableSource(path, source, target));
  if (!isObject(source)) return refuse(`${path}: a document needs a source object`);
  const sourceType = target.sourceTypes.find((type) => type === source['type']);
  switch (sourceType) {
    case 'text': {
      const data = source['data'];
      if (typeof data !== 'string') return refuse(`${path}.source.data must be a string`);
      return [{ type: 'text', text: `${heading(block)}${data}` }];
    }
    case 'content':
      return contentDocument(block, source['content'], path);
    case 'base64':
      return [base64File(block, source, path, target, refuse)];
    case 'url': {
      const url = source['url'];
      if (typeof url !== 'string') return refuse(`${path}.source.url must be a string`);
      if (!target.takesFileUrls) refuseFile(path, 'a PDF by URL', target);
      return [filePart(block, url, false)];
    }
    case undefined:
      if (source['type'] !== 'file') return invalidRequest(unreadableSource(path, source, target));
      return refuse(
        `${path}: a document with source type "file" refers to the Anthropic Files API, which ` +
          `${target.server} cannot read; send the document itself (base64 or text), or use the anthropic ` +
          'provider',
      );
    default: {
      const unknown: never = sourceType;
      return unknown;
    }
  }
}

/** A base64 file: a PDF, or where the server takes any file, one of any type (none given: a PDF). */
function base64File(
  block: Record<string, unknown>,
  source: Record<string, unknown>,
  path: string,
  target: DocumentTarget,
  refuse: (explanation: string) => never,
): FilePart {
  const mediaType = source['media_type'];
  const data = source['data'];
  const fileType = target.takesAnyFileType && typeof mediaType !== 'string' ? 'application/pdf' : mediaType;
  if (typeof data !== 'string' || (!target.takesAnyFileType && fileType !== 'application/pdf')) {
    return refuse(
      `${path}: a base64 document must be a PDF (media_type "application/pdf") with string data, ` +
        `got media_type ${JSON.stringify(mediaType)}`,
    );
  }
  if (!target.takesBase64Files) refuseFile(path, 'a base64 PDF', target);
  return filePart(block, `data:${String(fileType)};base64,${data}`, true);
}

/** `… a document with source type "zip" cannot be translated; use a text, content, base64 or url source`. */
function unreadableSource(path: string, source: unknown, target: DocumentTarget): string {
  const type = isObject(source) ? JSON.stringify(source['type']) : typeof source;
  const types = target.sourceTypes;
  const listed = `${types.slice(0, -1).join(', ')} or ${String(types.at(-1))}`;
  return `${path}: a document with source type ${type} cannot be translated; use a ${listed} source`;
}

function refuseFile(path: string, what: string, target: DocumentTarget): never {
  invalidRequest(
    `${path}: a document block holding ${what} cannot be sent to ${target.server}, which takes no ` +
      'file content parts; send the text of the document (source type "text"), or use the anthropic provider',
  );
}

function filePart(block: Record<string, unknown>, url: string, isDataUrl: boolean): FilePart {
  // Servers show the file name to the model, and OpenAI requires one with file data.
  const filename = nonEmptyString(block['title']) ?? 'document.pdf';
  return { type: 'file', filename, url, isDataUrl };
}

/** A `content` document: its text blocks as one text part, its images as image parts after it. */
function contentDocument(block: Record<string, unknown>, content: unknown, path: string): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: `${heading(block)}${content}` }];
  if (!Array.isArray(content)) {
    invalidRequest(`${path}.source.content must be a string or an array of blocks`);
  }
  const texts: string[] = [];
  const images: ImagePart[] = [];
  content.forEach((inner: unknown, index) => {
    const innerPath = `${path}.source.content[${index}]`;
    if (isObject(inner) && inner['type'] === 'text' && typeof inner['text'] === 'string') {
      texts.push(inner['text']);
    } else if (isObject(inner) && inner['type'] === 'image') {
      images.push(mapImageSource(inner['source'], innerPath));
    } else {
      invalidRequest(`${innerPath}: a document's content may hold only text and image blocks`);
    }
  });
  return [{ type: 'text', text: `${heading(block)}${texts.join('\n\n')}` }, ...images];
}

/**
 * An image source → an image part: base64 as a `data:` URL, a URL as it is.
 *
 * @throws TransportError `MODEL_EINVAL` for any other source (a Files API id).
 */
export function mapImageSource(source: unknown, path: string): ImagePart {
  if (isObject(source)) {
    if (
      source['type'] === 'base64' &&
      typeof source['media_type'] === 'string' &&
      typeof source['data'] === 'string'
    ) {
      return { type: 'image', url: `data:${source['media_type']};base64,${source['data']}` };
    }
    if (source['type'] === 'url' && typeof source['url'] === 'string') {
      return { type: 'image', url: source['url'] };
    }
  }
  const type = isObject(source) ? JSON.stringify(source['type']) : typeof source;
  return invalidRequest(
    `${path}: an image with source type ${type} cannot be translated; use a base64 or url source`,
  );
}

/**
 * The text a `search_result` block becomes:
 *
 * ```text
 * Search result: <title>
 * Source: <source>
 *
 * <content texts, separated by blank lines>
 * ```
 *
 * @throws TransportError `MODEL_EINVAL` for a block without a string `source` and `title`, or with
 *   content that is not text blocks.
 */
export function mapSearchResultBlock(searchResult: object, path: string): TextPart {
  // Only the block's `type` was validated: every other field is read as unknown.
  const block = searchResult as Record<string, unknown>;
  const source = block['source'];
  const title = block['title'];
  if (typeof source !== 'string' || typeof title !== 'string') {
    invalidRequest(`${path}: a search_result block needs a string source and a string title`);
  }
  const content = block['content'];
  if (!Array.isArray(content)) invalidRequest(`${path}.content must be an array of text blocks`);
  const texts = content.map((inner: unknown, index) => {
    if (!isObject(inner) || inner['type'] !== 'text' || typeof inner['text'] !== 'string') {
      invalidRequest(`${path}.content[${index}]: a search result's content may hold only text blocks`);
    }
    return inner['text'];
  });
  return { type: 'text', text: `Search result: ${title}\nSource: ${source}\n\n${texts.join('\n\n')}` };
}

/** Whether a part is text (what a Chat Completions tool message can hold). */
export function isTextPart(part: ContentPart): part is TextPart {
  return part.type === 'text';
}
