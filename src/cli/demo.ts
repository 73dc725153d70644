/**
 * `tpx demo` (what `npm start` runs): a complete tool-use round trip with no network and no
 * credentials. It starts `tpx mock-model` on an ephemeral loopback port, creates a transport that
 * selects `tpx` against it, and runs a short agent loop with two real local tools.
 *
 * @module
 */
import { createTransport } from '../transport/create-transport.js';
import { createSession } from '../transport/session.js';
import { startMockModel } from '../mock-model/mock-model.js';
import type { ContentBlock, MessageParam, MessagesRequest, ToolParam } from '../protocol/messages.js';
import type { CliIo } from './output.js';
import { EXIT_EXCHANGE_ERROR, EXIT_OK } from './output.js';

const TOOLS: ToolParam[] = [
  {
    name: 'add',
    description: 'Adds two numbers and returns the sum.',
    input_schema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
  {
    name: 'now',
    description: 'Reads the local clock and returns the current time as an ISO 8601 string.',
    input_schema: {
      type: 'object',
      properties: { timezone: { type: 'string', enum: ['UTC'] } },
      required: [],
    },
  },
];

/** Runs one of the demo's local tools. */
function runTool(name: string, input: Record<string, unknown>): { content: string; isError: boolean } {
  switch (name) {
    case 'add': {
      const a = Number(input['a']);
      const b = Number(input['b']);
      if (!Number.isFinite(a) || !Number.isFinite(b))
        return { content: 'add needs two numbers a and b', isError: true };
      return { content: String(a + b), isError: false };
    }
    case 'now':
      return { content: new Date().toISOString(), isError: false };
    default:
      return { content: `unknown tool ${name}`, isError: true };
  }
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

/** A one-line view of a Messages history: each message's role and block types. */
function describeMessages(messages: readonly MessageParam[]): string {
  return messages
    .map((message) => {
      if (typeof message.content === 'string') return `${message.role}:text`;
      const blocks = message.content.map((block) =>
        block.type === 'tool_use' || block.type === 'tool_result'
          ? `${block.type}(${String((block as { id?: string; tool_use_id?: string }).id ?? (block as { tool_use_id?: string }).tool_use_id)})`
          : block.type,
      );
      return `${message.role}:[${blocks.join(',')}]`;
    })
    .join('  ');
}

/** Runs the demo; resolves to the process exit code. */
export async function runDemo(io: CliIo): Promise<number> {
  const mock = await startMockModel({ token: 'demo-token' });
  const transport = createTransport({
    env: { TPX_OAUTH_TOKEN: 'demo-token', TPX_BASE_URL: mock.url, TPX_MODEL: 'tpx-mock-1' },
  });
  const session = createSession(transport);
  const say = (text: string) => io.stdout(`${text}\n`);
  try {
    say('tpx-transport demo: an agent loop over the Messages protocol, served by an OpenAI-compatible model');
    say(`  model server : tpx mock-model at ${mock.url} (local, scripted)`);
    say(`  provider     : ${transport.provider} (${transport.selection.reason})`);
    say('');
    const question = 'What is 2 + 3, and what time is it now? Use the tools.';
    const messages: MessageParam[] = [{ role: 'user', content: question }];
    say(`user: ${question}`);
    for (let turn = 1; turn <= 4; turn++) {
      const request: MessagesRequest = { model: 'claude-demo', max_tokens: 512, tools: TOOLS, messages };
      say('');
      say(
        `── exchange ${turn}: Messages request (${messages.length} message${messages.length === 1 ? '' : 's'}, ${TOOLS.length} tools) → tpx → Chat Completions`,
      );
      say(`   request messages: ${describeMessages(messages)}`);
      const message = await session.send(request);
      const wire = mock.requests.at(-1)?.body as
        { messages?: { role: string; tool_call_id?: string }[] } | undefined;
      if (wire?.messages !== undefined) {
        const roles = wire.messages.map((entry) =>
          entry.role === 'tool' ? `tool(${entry.tool_call_id ?? '?'})` : entry.role,
        );
        say(`   on the wire (Chat Completions): ${roles.join(', ')}`);
      }
      say(
        `   Messages response: stop_reason=${String(message.stop_reason)}, usage in=${message.usage.input_tokens} out=${message.usage.output_tokens}`,
      );
      const toolUses = message.content.filter(
        (block): block is Extract<ContentBlock, { type: 'tool_use' }> => block.type === 'tool_use',
      );
      for (const block of message.content) {
        if (block.type === 'text') say(`assistant: ${(block as { text: string }).text}`);
      }
      if (toolUses.length === 0) {
        say('');
        say(
          'done: the model answered after using the tools; every tool_use was paired with its tool_result.',
        );
        return EXIT_OK;
      }
      messages.push({ role: 'assistant', content: message.content });
      const results: MessageParam['content'] = [];
      for (const toolUse of toolUses) {
        say(`   tool call ${toolUse.id}: ${toolUse.name}(${JSON.stringify(toolUse.input)})`);
        const result = runTool(toolUse.name, toolUse.input);
        say(`   tool result for ${toolUse.id}:`);
        say(indent(result.content));
        results.push({
          type: 'tool_result',
          tool_use_id: toolUse.id,
          content: result.content,
          is_error: result.isError,
        });
      }
      messages.push({ role: 'user', content: results });
    }
    io.stderr('the demo did not finish within 4 exchanges\n');
    return EXIT_EXCHANGE_ERROR;
  } finally {
    await transport.close();
    await mock.close();
  }
}
