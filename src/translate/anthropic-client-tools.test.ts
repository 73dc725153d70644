import { describe, expect, it } from 'vitest';
import { ANTHROPIC_CLIENT_TOOLS, anthropicClientTool } from './anthropic-client-tools.js';

describe('anthropicClientTool', () => {
  it("offers an Anthropic-defined tool under the caller's name with its documented schema", () => {
    const bash = ANTHROPIC_CLIENT_TOOLS.get('bash_20250124');
    expect(anthropicClientTool({ type: 'bash_20250124', name: 'my_bash' })).toStrictEqual({
      name: 'my_bash',
      description: bash?.description,
      input_schema: bash?.input_schema,
    });
  });

  it('falls back to the documented name when the caller gives none or an empty one', () => {
    expect(anthropicClientTool({ type: 'text_editor_20250728' })?.name).toBe('str_replace_based_edit_tool');
    expect(anthropicClientTool({ type: 'text_editor_20250124', name: '' })?.name).toBe('str_replace_editor');
    expect(anthropicClientTool({ type: 'memory_20250818', name: 7 })?.name).toBe('memory');
  });

  it('tells the model the display size of a computer tool', () => {
    const computer = ANTHROPIC_CLIENT_TOOLS.get('computer_20250124');
    expect(
      anthropicClientTool({
        type: 'computer_20250124',
        name: 'computer',
        display_width_px: 1024,
        display_height_px: 768,
      })?.description,
    ).toBe(`${computer?.description} The display is 1024×768 pixels.`);
  });

  it('leaves the description alone without both display sizes as numbers', () => {
    const computer = ANTHROPIC_CLIENT_TOOLS.get('computer_20251124');
    for (const size of [
      { display_width_px: 1024 },
      { display_height_px: 768 },
      { display_width_px: '1024', display_height_px: 768 },
      { display_width_px: 1024, display_height_px: '768' },
    ]) {
      expect(anthropicClientTool({ type: 'computer_20251124', name: 'computer', ...size })?.description).toBe(
        computer?.description,
      );
    }
  });

  it('gives undefined for a custom tool, a server tool or an unknown type', () => {
    expect(anthropicClientTool({ name: 'get_weather' })).toBeUndefined();
    expect(anthropicClientTool({ type: null, name: 'bash' })).toBeUndefined();
    expect(anthropicClientTool({ type: 'custom', name: 'bash' })).toBeUndefined();
    expect(anthropicClientTool({ type: 'web_search_20250305', name: 'web_search' })).toBeUndefined();
    expect(anthropicClientTool({ type: 'bash_20990101', name: 'bash' })).toBeUndefined();
  });

  it('spells out the insert field each text editor version sends', () => {
    const schema = (type: string) =>
      anthropicClientTool({ type })?.input_schema as {
        properties: Record<string, unknown>;
        required: string[];
      };
    expect(Object.keys(schema('text_editor_20250728').properties)).toContain('insert_text');
    expect(Object.keys(schema('text_editor_20250124').properties)).not.toContain('insert_text');
    expect(schema('text_editor_20250124').properties['command']).toMatchObject({
      enum: ['view', 'create', 'str_replace', 'insert', 'undo_edit'],
    });
    expect(schema('bash_20241022').required).toStrictEqual([]);
    expect(schema('text_editor_20250429').required).toStrictEqual(['command', 'path']);
  });
});
