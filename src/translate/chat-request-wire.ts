/**
 * The Chat Completions wire as the Messages-side front end sees it (`RequestWire`): what the dialect's
 * server takes of cache markers and files, and how refusals name the server. Pure.
 *
 * Which dialects take a PDF as a `file` content part (`{type:"file", file:{filename, file_data}}`), and
 * the sources:
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
 * @module
 */
import { describeDialect } from './describe-dialect.js';
import type { DialectName, DialectProfile } from './dialects.js';
import { forwardsCacheControl } from './map-cache-control.js';
import type { RequestWire } from './request-wire.js';

/** The dialects that take PDF `file` parts, from base64 data and from a URL (see the module comment). */
const FILE_PART_SUPPORT: Partial<Record<DialectName, { base64: boolean; url: boolean }>> = {
  openai: { base64: true, url: false },
  openrouter: { base64: true, url: true },
  'openai-generic': { base64: true, url: false },
};

/**
 * The Chat Completions wire to a server of `dialect`; no dialect means a generic OpenAI-compatible
 * server (the translator's own output), which takes base64 PDFs.
 */
export function chatRequestWire(dialect: DialectProfile | undefined): RequestWire {
  const server = describeDialect(dialect);
  const files = FILE_PART_SUPPORT[dialect?.name ?? 'openai-generic'];
  return {
    name: 'Chat Completions',
    prefillRefuser: 'OpenAI-compatible servers',
    serverToolRefusal: `a server tool that runs on Anthropic's side, which ${server} cannot run`,
    assistantMediaRefusal: (type) =>
      type === 'image'
        ? 'Chat Completions does not accept images in assistant messages'
        : 'document blocks are only translated in user messages',
    outputFormatEquivalent: 'a Chat Completions equivalent (response_format)',
    forwardsCacheControl: forwardsCacheControl(dialect),
    documents: {
      server,
      sourceTypes: ['text', 'content', 'base64', 'url'],
      takesBase64Files: files?.base64 === true,
      takesFileUrls: files?.url === true,
      takesAnyFileType: false,
      explainsRefusals: true,
    },
  };
}
