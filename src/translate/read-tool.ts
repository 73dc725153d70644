/**
 * Tool definitions, Messages → wire-neutral function tools (docs/translation.md). Pure.
 *
 * @module
 */
import { isObject } from '../protocol/is-object.js';
import type { ToolParam } from '../protocol/messages.js';
import { anthropicClientTool } from './anthropic-client-tools.js';
import { invalidRequest } from './invalid-request.js';
import type { NeutralTool } from './neutral-request.js';
import type { ToolNameMap } from './tool-name-codec.js';

/**
 * Server tools run on Anthropic's side: nothing on the other side can run them. Anthropic-defined client
 * tools (`bash_*`, `text_editor_*`, …) are run by the caller and pass (see `anthropic-client-tools.ts`).
 *
 * @param refusal why the wire refuses a server tool (`RequestWire.serverToolRefusal`)
 * @throws TransportError `MODEL_EINVAL` naming the first server tool, its position and its type.
 */
export function rejectServerTools(tools: readonly ToolParam[], refusal: string): void {
  tools.forEach((tool, index) => {
    if (tool.type === undefined || tool.type === null || tool.type === 'custom') return;
    if (anthropicClientTool(tool) !== undefined) return;
    invalidRequest(
      `tools[${index}] (${JSON.stringify(tool.name)}) has type ${JSON.stringify(tool.type)}: ${refusal}; ` +
        'remove it, or use the anthropic provider',
    );
  });
}

/**
 * One tool definition as a function tool, its name encoded with the request's tool-name map. An
 * Anthropic-defined client tool gets its documented description and schema (the caller sent only the
 * type, which a model other than Claude cannot know); `cache_control`, `defer_loading`, `input_examples`,
 * `eager_input_streaming` and `allowed_callers` are dropped.
 */
export function readTool(tool: ToolParam, toolNames: ToolNameMap): NeutralTool {
  const name = toolNames.toUpstream(tool.name);
  const clientTool = anthropicClientTool(tool);
  if (clientTool !== undefined) {
    return { name, description: clientTool.description, parameters: { ...clientTool.input_schema } };
  }
  const read: NeutralTool = { name };
  if (typeof tool.description === 'string') read.description = tool.description;
  if (isObject(tool.input_schema)) read.parameters = tool.input_schema;
  if (typeof tool['strict'] === 'boolean') read.strict = tool['strict'];
  return read;
}
