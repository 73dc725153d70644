/**
 * Anthropic-defined client tools: the tools whose `type` Anthropic defines (`bash_20250124`,
 * `text_editor_20250728`, …) but which the caller runs. Claude knows their input schemas by heart, so a
 * request names only the type; any other model needs the schema spelled out. Offered upstream as
 * ordinary function tools with the documented name and input schema, their calls come back as
 * `tool_use` blocks under the same name, and the caller runs them as it would for Claude. Pure data.
 *
 * Sources: the Anthropic tool documentation (platform.claude.com/docs/en/agents-and-tools/tool-use/:
 * `bash-tool`, `text-editor-tool`, `computer-use-tool`, `memory-tool`). Where the documentation and
 * Claude disagree, the schema follows what Claude emits, since that is what callers' tool runners were
 * tested against: the `insert` command of the Claude 4 text editors sends the text as `insert_text`
 * (the documentation says `new_str`; anthropic-sdk-python issue 1155).
 *
 * Tools that run on Anthropic's side (web search, web fetch, code execution, tool search, MCP toolsets)
 * are not here: no upstream can run them, and the translator refuses them by name.
 *
 * @module
 */

/** A function tool as offered upstream for an Anthropic-defined client tool. */
export interface ClientToolDefinition {
  /** The documented tool name (the `name` a request must give for this type). */
  readonly name: string;
  /** What the tool does, for a model that has not been trained on it. */
  readonly description: string;
  /** The documented input schema. */
  readonly input_schema: Readonly<Record<string, unknown>>;
}

const string = (description: string) => ({ type: 'string', description });
const integer = (description: string) => ({ type: 'integer', description });
const integerPair = (description: string) => ({
  type: 'array',
  items: { type: 'integer' },
  minItems: 2,
  maxItems: 2,
  description,
});

function objectSchema(properties: Record<string, unknown>, required: readonly string[]) {
  return { type: 'object', properties, required: [...required] };
}

const BASH: ClientToolDefinition = {
  name: 'bash',
  description:
    'Runs a command in a persistent bash shell and returns its output. State (working directory, ' +
    'environment variables, files) persists between calls. Set restart to true to start a fresh shell.',
  input_schema: objectSchema(
    {
      command: string('The bash command to run. Required unless restart is true.'),
      restart: { type: 'boolean', description: 'Restart the shell instead of running a command.' },
    },
    [],
  ),
};

/** The text editor's commands; `undo_edit` exists only in the versions before Claude 4. */
function textEditor(name: string, withUndo: boolean, insertField: 'new_str' | 'insert_text') {
  const commands = ['view', 'create', 'str_replace', 'insert', ...(withUndo ? ['undo_edit'] : [])];
  return {
    name,
    description:
      'Views, creates and edits text files. Commands: view (a file with line numbers, or a directory ' +
      'listing; view_range [start, end] limits the lines, -1 as end means to the end), create (path, ' +
      'file_text), str_replace (replaces old_str, which must match exactly once, by new_str), insert ' +
      `(inserts ${insertField} after line insert_line, 0 for the top)` +
      (withUndo ? ', undo_edit (reverts the last edit of path).' : '.'),
    input_schema: objectSchema(
      {
        command: { type: 'string', enum: commands, description: 'The command to run.' },
        path: string('Absolute path of the file or directory.'),
        file_text: string('create: the content of the new file.'),
        old_str: string('str_replace: the exact text to replace.'),
        new_str: string(
          insertField === 'new_str'
            ? 'str_replace: the replacement text; insert: the text to insert.'
            : 'str_replace: the replacement text.',
        ),
        ...(insertField === 'insert_text' ? { insert_text: string('insert: the text to insert.') } : {}),
        insert_line: integer('insert: the line after which to insert (0 inserts at the top).'),
        view_range: integerPair('view: the first and last line to show (1-based; -1 means the end).'),
      },
      ['command', 'path'],
    ),
  } satisfies ClientToolDefinition;
}

const COMPUTER_ACTIONS_2024 = [
  'key',
  'type',
  'mouse_move',
  'left_click',
  'left_click_drag',
  'right_click',
  'middle_click',
  'double_click',
  'screenshot',
  'cursor_position',
];
const COMPUTER_ACTIONS_2025 = [
  ...COMPUTER_ACTIONS_2024,
  'left_mouse_down',
  'left_mouse_up',
  'scroll',
  'hold_key',
  'wait',
  'triple_click',
];

function computer(actions: readonly string[], withZoom: boolean): ClientToolDefinition {
  const all = withZoom ? [...actions, 'zoom'] : [...actions];
  return {
    name: 'computer',
    description:
      'Controls a computer through its screen, mouse and keyboard. Take a screenshot to see the screen; ' +
      'coordinates are pixels [x, y] from the top left corner of the display.',
    input_schema: objectSchema(
      {
        action: { type: 'string', enum: all, description: 'The action to perform.' },
        coordinate: integerPair('[x, y] for mouse actions (the end point of left_click_drag).'),
        start_coordinate: integerPair('left_click_drag: the start point [x, y].'),
        text: string('type: the text to type; key and hold_key: the key or combination (e.g. "ctrl+s").'),
        ...(actions.includes('scroll')
          ? {
              scroll_direction: {
                type: 'string',
                enum: ['up', 'down', 'left', 'right'],
                description: 'scroll: the direction.',
              },
              scroll_amount: integer('scroll: how many wheel clicks.'),
              duration: { type: 'number', description: 'hold_key and wait: seconds.' },
            }
          : {}),
        ...(withZoom
          ? {
              region: {
                type: 'array',
                items: { type: 'integer' },
                minItems: 4,
                maxItems: 4,
                description: 'zoom: the area [x1, y1, x2, y2] to show enlarged.',
              },
            }
          : {}),
      },
      ['action'],
    ),
  };
}

const MEMORY: ClientToolDefinition = {
  name: 'memory',
  description:
    'Reads and writes files in a persistent memory directory (/memories) that outlives this ' +
    'conversation. Commands: view (a file or directory; view_range limits the lines), create (path, ' +
    'file_text), str_replace (old_str by new_str), insert (insert_text after insert_line), delete ' +
    '(path), rename (old_path to new_path).',
  input_schema: objectSchema(
    {
      command: {
        type: 'string',
        enum: ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'],
        description: 'The command to run.',
      },
      path: string('The path under /memories.'),
      file_text: string('create: the content of the new file.'),
      old_str: string('str_replace: the exact text to replace.'),
      new_str: string('str_replace: the replacement text.'),
      insert_line: integer('insert: the line after which to insert.'),
      insert_text: string('insert: the text to insert.'),
      view_range: integerPair('view: the first and last line to show.'),
      old_path: string('rename: the current path.'),
      new_path: string('rename: the new path.'),
    },
    ['command'],
  ),
};

/** Every Anthropic-defined client tool type this library can offer upstream, by its versioned type. */
export const ANTHROPIC_CLIENT_TOOLS: ReadonlyMap<string, ClientToolDefinition> = new Map([
  ['bash_20241022', BASH],
  ['bash_20250124', BASH],
  ['text_editor_20241022', textEditor('str_replace_editor', true, 'new_str')],
  ['text_editor_20250124', textEditor('str_replace_editor', true, 'new_str')],
  ['text_editor_20250429', textEditor('str_replace_based_edit_tool', false, 'insert_text')],
  ['text_editor_20250728', textEditor('str_replace_based_edit_tool', false, 'insert_text')],
  ['computer_20241022', computer(COMPUTER_ACTIONS_2024, false)],
  ['computer_20250124', computer(COMPUTER_ACTIONS_2025, false)],
  ['computer_20251124', computer(COMPUTER_ACTIONS_2025, true)],
  ['memory_20250818', MEMORY],
]);

/**
 * The function tool to offer for an Anthropic-defined client tool, or `undefined` when `type` is not
 * one (a custom tool, a server tool, a type this library does not know).
 *
 * A computer tool's display size (`display_width_px`, `display_height_px`) is told to the model in the
 * description, since the model picks coordinates on that screen. The name is the caller's `name` (which
 * Anthropic requires to be the documented one), so the call comes back under the name the caller knows.
 *
 * @example
 * anthropicClientTool({ type: 'bash_20250124', name: 'bash' })?.input_schema.required // → []
 */
export function anthropicClientTool(tool: {
  type?: string | null;
  name?: unknown;
  [key: string]: unknown;
}): ClientToolDefinition | undefined {
  if (typeof tool.type !== 'string') return undefined;
  const definition = ANTHROPIC_CLIENT_TOOLS.get(tool.type);
  if (definition === undefined) return undefined;
  const name = typeof tool.name === 'string' && tool.name !== '' ? tool.name : definition.name;
  const width = tool['display_width_px'];
  const height = tool['display_height_px'];
  const description =
    typeof width === 'number' && typeof height === 'number'
      ? `${definition.description} The display is ${width}×${height} pixels.`
      : definition.description;
  return { name, description, input_schema: definition.input_schema };
}
