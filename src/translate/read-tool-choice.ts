/**
 * `tool_choice` (with `disable_parallel_tool_use`) → the wire-neutral tool choice (docs/translation.md).
 * Pure.
 *
 * @module
 */
import type { ToolChoice, ToolParam } from '../protocol/messages.js';
import { invalidRequest } from './invalid-request.js';
import type { NeutralToolChoice } from './neutral-request.js';
import type { ToolNameMap } from './tool-name-codec.js';

/**
 * `tool_choice` as what the model may call (`any` is `required`; a named tool by its upstream name), and
 * `parallelToolCalls: false` when the caller set `disable_parallel_tool_use`. `auto` and `none` without
 * tools ask for nothing (`undefined`).
 *
 * @throws TransportError `MODEL_EINVAL` for `any` without tools, a named tool not in `tools`, or an
 *   unknown type.
 */
export function readToolChoice(
  choice: ToolChoice,
  tools: readonly ToolParam[],
  toolNames: ToolNameMap,
): { toolChoice: NeutralToolChoice; parallelToolCalls: false | undefined } | undefined {
  const hasTools = tools.length > 0;
  const parallelToolCalls =
    choice.type !== 'none' && choice.disable_parallel_tool_use === true ? false : undefined;
  switch (choice.type) {
    case 'auto':
      return hasTools ? { toolChoice: 'auto', parallelToolCalls } : undefined;
    case 'none':
      return hasTools ? { toolChoice: 'none', parallelToolCalls } : undefined;
    case 'any':
      if (!hasTools) invalidRequest('tool_choice {"type": "any"} requires at least one tool in tools');
      return { toolChoice: 'required', parallelToolCalls };
    case 'tool':
      if (!tools.some((tool) => tool.name === choice.name)) {
        invalidRequest(`tool_choice names the tool ${JSON.stringify(choice.name)}, which is not in tools`);
      }
      return { toolChoice: { name: toolNames.toUpstream(choice.name) }, parallelToolCalls };
    default: {
      const unknown: never = choice;
      return invalidRequest(
        `tool_choice has an unknown type ${JSON.stringify((unknown as { type: unknown }).type)}`,
      );
    }
  }
}
