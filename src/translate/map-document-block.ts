/**
 * `document` and `search_result` blocks → Chat Completions content parts, per dialect. Pure.
 *
 * | document source                      | becomes                                                                      |
 * |--------------------------------------|------------------------------------------------------------------------------|
 * | `text` (plain text)                  | a text part: title, context, then the text                                   |
 * | `content` (text and image blocks)    | a text part (title, context, the texts), then an `image_url` part per image  |
 * | `base64` PDF                         | a `file` part (`file_data` as a data URL) where the dialect takes one        |
 * | `url` (a PDF on the web)             | a `file` part with the URL as `file_data` where the dialect takes one        |
 * | `file` (an Anthropic Files API id)   | refused everywhere: the id means nothing to another server                   |
 *
 * Which dialects take a PDF `file` part, and the sources:
 *
 * | dialect          | base64 | URL | source |
 * |------------------|--------|-----|--------|
 * | `openai`         | yes    | no  | OpenAI "File inputs" guide: Chat Completions takes `{type:"file", file:{filename, file_data}}` with a base64 data URL (URLs only on the Responses API) |
 * | `openrouter`     | yes    | yes | openrouter.ai/docs/features/multimodal/pdfs: `file` parts with a data URL or a public URL, on any model (parsed for models without file input) |
 * | `openai-generic` | yes    | no  | the reference OpenAI shape; a server that does not know it answers with its own 400, passed on |
 * | `llamacpp`       | no     | no  | recorded: llama.cpp b11669 answers 400 "unsupported content[].type" |
 * | `vllm`           | no     | no  | vLLM answers 400 "Unsupported chat content part type: 'file'" (vllm-project/vllm issue 46562, PR 57774 open) |
 * | every other      | no     | no  | not in the server's documented OpenAI-compatible content parts |
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
import { TransportError } from '../errors.js';
import type {
  ChatContentPart,
  ChatFilePart,
  ChatImagePart,
  ChatTextPart,
} from '../protocol/chat-completions.js';
import { describeDialect } from './describe-dialect.js';
import type { DialectName, DialectProfile } from './dialects.js';
import { isObject } from '../protocol/is-object.js';

/** Whether a dialect's server takes a PDF as a `file` part, from base64 data and from a URL. */
interface FilePartSupport {
  readonly base64: boolean;
  readonly url: boolean;
}

const NO_FILE_PARTS: FilePartSupport = { base64: false, url: false };

/** The dialects that take PDF `file` parts (see the module comment for the sources). */
const FILE_PART_SUPPORT: Partial<Record<DialectName, FilePartSupport>> = {
  openai: { base64: true, url: false },
  openrouter: { base64: true, url: true },
  'openai-generic': { base64: true, url: false },
};

/** What a document becomes: content parts, of which only text parts may go into a tool message. */
export type DocumentPart = ChatTextPart | ChatImagePart | ChatFilePart;

function invalid(message: string): never {
  throw new TransportError('MODEL_EINVAL', message);
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The support of a dialect; no dialect given means the generic one (the translator's own output). */
function supportOf(dialect: DialectProfile | undefined): FilePartSupport {
  return FILE_PART_SUPPORT[dialect?.name ?? 'openai-generic'] ?? NO_FILE_PARTS;
}

/** The title and context lines that head a document's text, then a blank line, when there are any. */
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
 * @throws TransportError `MODEL_EINVAL` naming the block, its source and the dialect, for a source the
 *   dialect cannot take or a block that is malformed.
 */
export function mapDocumentBlock(
  documentBlock: object,
  path: string,
  dialect: DialectProfile | undefined,
): DocumentPart[] {
  // Only the block's `type` was validated: every other field is read as unknown.
  const block = documentBlock as Record<string, unknown>;
  const source = block['source'];
  const sourceType = isObject(source) ? source['type'] : undefined;
  if (!isObject(source)) invalid(`${path}: a document needs a source object`);
  switch (sourceType) {
    case 'text': {
      if (typeof source['data'] !== 'string') invalid(`${path}.source.data must be a string`);
      return [{ type: 'text', text: `${heading(block)}${source['data']}` }];
    }
    case 'content':
      return contentDocument(block, source['content'], path);
    case 'base64': {
      const mediaType = source['media_type'];
      const data = source['data'];
      if (mediaType !== 'application/pdf' || typeof data !== 'string') {
        invalid(
          `${path}: a base64 document must be a PDF (media_type "application/pdf") with string data, ` +
            `got media_type ${JSON.stringify(mediaType)}`,
        );
      }
      if (!supportOf(dialect).base64) refuseFile(path, 'a base64 PDF', dialect);
      return [filePart(block, `data:application/pdf;base64,${data}`)];
    }
    case 'url': {
      const url = source['url'];
      if (typeof url !== 'string') invalid(`${path}.source.url must be a string`);
      if (!supportOf(dialect).url) refuseFile(path, 'a PDF by URL', dialect);
      return [filePart(block, url)];
    }
    case 'file':
      return invalid(
        `${path}: a document with source type "file" refers to the Anthropic Files API, which ` +
          `${describeDialect(dialect)} cannot read; send the document itself (base64 or text), or use the ` +
          'anthropic provider',
      );
    default:
      return invalid(
        `${path}: a document with source type ${JSON.stringify(sourceType)} cannot be translated; use a text, ` +
          'content, base64 or url source',
      );
  }
}

function refuseFile(path: string, what: string, dialect: DialectProfile | undefined): never {
  invalid(
    `${path}: a document block holding ${what} cannot be sent to ${describeDialect(dialect)}, which takes no ` +
      'file content parts; send the text of the document (source type "text"), or use the anthropic provider',
  );
}

function filePart(block: Record<string, unknown>, fileData: string): ChatFilePart {
  // Servers show the file name to the model, and OpenAI requires one with file_data.
  const filename = nonEmptyString(block['title']) ?? 'document.pdf';
  return { type: 'file', file: { filename, file_data: fileData } };
}

/** A `content` document: its text blocks as one text part, its images as image parts after it. */
function contentDocument(block: Record<string, unknown>, content: unknown, path: string): DocumentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: `${heading(block)}${content}` }];
  if (!Array.isArray(content)) invalid(`${path}.source.content must be a string or an array of blocks`);
  const texts: string[] = [];
  const images: ChatImagePart[] = [];
  content.forEach((inner: unknown, index) => {
    const innerPath = `${path}.source.content[${index}]`;
    if (isObject(inner) && inner['type'] === 'text' && typeof inner['text'] === 'string') {
      texts.push(inner['text']);
    } else if (isObject(inner) && inner['type'] === 'image') {
      images.push(mapImageSource(inner['source'], innerPath));
    } else {
      invalid(`${innerPath}: a document's content may hold only text and image blocks`);
    }
  });
  return [{ type: 'text', text: `${heading(block)}${texts.join('\n\n')}` }, ...images];
}

/**
 * An image source → an `image_url` part: base64 as a data URL, a URL as it is.
 *
 * @throws TransportError `MODEL_EINVAL` for any other source (a Files API id).
 */
export function mapImageSource(source: unknown, path: string): ChatImagePart {
  if (isObject(source)) {
    if (
      source['type'] === 'base64' &&
      typeof source['media_type'] === 'string' &&
      typeof source['data'] === 'string'
    ) {
      return {
        type: 'image_url',
        image_url: { url: `data:${source['media_type']};base64,${source['data']}` },
      };
    }
    if (source['type'] === 'url' && typeof source['url'] === 'string') {
      return { type: 'image_url', image_url: { url: source['url'] } };
    }
  }
  const type = isObject(source) ? JSON.stringify(source['type']) : typeof source;
  return invalid(
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
export function mapSearchResultBlock(searchResult: object, path: string): ChatTextPart {
  // Only the block's `type` was validated: every other field is read as unknown.
  const block = searchResult as Record<string, unknown>;
  const source = block['source'];
  const title = block['title'];
  if (typeof source !== 'string' || typeof title !== 'string') {
    invalid(`${path}: a search_result block needs a string source and a string title`);
  }
  const content = block['content'];
  if (!Array.isArray(content)) invalid(`${path}.content must be an array of text blocks`);
  const texts = content.map((inner: unknown, index) => {
    if (!isObject(inner) || inner['type'] !== 'text' || typeof inner['text'] !== 'string') {
      invalid(`${path}.content[${index}]: a search result's content may hold only text blocks`);
    }
    return inner['text'];
  });
  return { type: 'text', text: `Search result: ${title}\nSource: ${source}\n\n${texts.join('\n\n')}` };
}

/** Whether a part may go into a tool message (only text can; the rest follows in a user message). */
export function isTextPart(part: ChatContentPart): part is ChatTextPart {
  return part.type === 'text';
}
