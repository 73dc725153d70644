/**
 * Records, from a real llama.cpp server, tool calls written as text in the model's own template format,
 * into `test/dialects/__fixtures__/text-tool-calls/`. Run from the repository root:
 *
 * ```sh
 * npx tsx test/real-server/record-text-tool-calls.ts
 * ```
 *
 * - `hermes.apply-template.json`: `POST /apply-template` with an assistant turn holding two tool calls;
 *   the prompt shows how the model's chat template (Qwen/Hermes style) writes calls:
 *   `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`, one block per call.
 * - `hermes.chat.json` and `hermes.chat.stream.sse`: a Chat Completions answer whose content is such a
 *   call, as a server answers when its tool-call parser is not in play (vLLM without
 *   `--enable-auto-tool-choice`, llama.cpp without `--jinja`). The request offers no `tools` (so this
 *   server's parser stays out of it) and a GBNF `grammar` holds the tiny model to the template's format;
 *   the bytes, the chunking of the stream and the usage are the server's own.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { startLlamaServer } from './llama-server.js';

const folder = new URL('../dialects/__fixtures__/text-tool-calls/', import.meta.url);
mkdirSync(folder, { recursive: true });

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Reads a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

/** Text, then one Hermes call in the template's layout, with a city the model picks. */
const HERMES_GRAMMAR =
  'root ::= "Checking.\\n<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": ' +
  '{\\"city\\": \\"" [a-zA-Z]{3,8} "\\"}}\\n</tool_call>"';

const server = await startLlamaServer({ model: 'tiny-tools', seed: 42 });
try {
  const post = async (path: string, body: unknown): Promise<string> => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.text();
  };
  const template = await post('/apply-template', {
    messages: [
      { role: 'user', content: 'The weather in Paris, and read notes.txt' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: '21 C' },
      { role: 'tool', tool_call_id: 'c2', content: 'hello' },
    ],
    tools: TOOLS,
  });
  writeFileSync(new URL('hermes.apply-template.json', folder), template);
  const chat = {
    model: 'tiny-tools',
    seed: 42,
    max_tokens: 200,
    messages: [{ role: 'user', content: 'The weather in Paris?' }],
    grammar: HERMES_GRAMMAR,
  };
  writeFileSync(new URL('hermes.chat.json', folder), await post('/v1/chat/completions', chat));
  writeFileSync(
    new URL('hermes.chat.stream.sse', folder),
    await post('/v1/chat/completions', { ...chat, stream: true, stream_options: { include_usage: true } }),
  );
  console.log(`recorded into ${folder.pathname}`);
} finally {
  await server.stop();
}
