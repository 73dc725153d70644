/**
 * Tool definitions, Messages → Chat Completions function tools (docs/translation.md). Pure.
 *
 * @module
 */
import { isObject as isRecord } from '../protocol/is-object.js';
import type { ChatFunctionTool } from '../protocol/chat-completions.js';
import type { ToolParam } from '../protocol/messages.js';
import { anthropicClientTool } from './anthropic-client-tools.js';
import { describeDialect } from './describe-dialect.js';
import type { DialectProfile } from './dialects.js';
import { invalidRequest } from './invalid-request.js';
import type { ToolNameMap } from './tool-name-codec.js';

/**
 * Server tools run on Anthropic's side: nothing on the other side can run them. Anthropic-defined client
 * tools (`bash_*`, `text_editor_*`, …) are run by the caller and pass (see `anthropic-client-tools.ts`).
 */
export function rejectServerTools(tools: readonly ToolParam[], dialect: DialectProfile | undefined): void {
  tools.forEach((tool, index) => {
    if (tool.type === undefined || tool.type === null || tool.type === 'custom') return;
    if (anthropicClientTool(tool) !== undefined) return;
    invalidRequest(
      `tools[${index}] (${JSON.stringify(tool.name)}) has type ${JSON.stringify(tool.type)}: a server tool that ` +
        `runs on Anthropic's side, which ${describeDialect(dialect)} cannot run; remove it, or use the ` +
        'anthropic provider',
    );
  });
}

/**
 * One tool definition as a Chat Completions function tool, its name encoded with the request's tool-name
 * map. An Anthropic-defined client tool gets its documented description and schema; `cache_control`,
 * `defer_loading`, `input_examples`, `eager_input_streaming` and `allowed_callers` are dropped.
 */
export function translateTool(tool: ToolParam, toolNames: ToolNameMap): ChatFunctionTool {
  const fn: ChatFunctionTool['function'] = { name: toolNames.toUpstream(tool.name) };
  const clientTool = anthropicClientTool(tool);
  if (clientTool !== undefined) {
    // The documented schema: the caller sent only the type, which a model other than Claude cannot know.
    return {
      type: 'function',
      function: { ...fn, description: clientTool.description, parameters: { ...clientTool.input_schema } },
    };
  }
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (isRecord(tool.input_schema)) fn.parameters = tool.input_schema;
  if (typeof tool['strict'] === 'boolean') fn.strict = tool['strict'];
  // cache_control, defer_loading, input_examples, eager_input_streaming, allowed_callers: dropped.
  return { type: 'function', function: fn };
}
