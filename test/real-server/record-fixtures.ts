/**
 * Records what a real llama.cpp server answers into `test/dialects/__fixtures__/llamacpp/b<build>/`, so
 * the unit tests (`test/dialects/llamacpp-recorded.test.ts`) replay the server's own bytes without running
 * it. Run it again after a llama.cpp upgrade, from the repository root:
 *
 * ```sh
 * npx tsx test/real-server/record-fixtures.ts
 * ```
 *
 * The binary is found as for the real-server suite (`TPX_LLAMA_SERVER`, else
 * `../shared/realserver/llama-server`), and so are the two models. One server process per model and
 * context size, on a free loopback port, with a fixed seed; every recorded request is sent once, raw
 * (not through tpx: the strict template's refusal needs a system message after the first, which tpx
 * folds away). Each `<name>.json` / `<name>.sse` is the response body byte for byte; `<name>.meta.json`
 * beside it holds the request as sent, the status, the response headers and the server's command line.
 *
 * The JSON/stream pairs (`chat.tool-call.cached.json` and `chat.tool-call.stream.sse`, the cut pairs,
 * the `/v1/messages` pairs) are the same exchange: the same prompt with the same seed, each sent after
 * that prompt is in the server's cache, so their usage is comparable too.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { basename } from 'node:path';
import { findLlamaServer, startLlamaServer, type LlamaServer } from './llama-server.js';
import { claudeCodeShape, forcedToolRequest, isCompleteJson } from './real-server-support.js';

const binary = findLlamaServer();
if (binary === undefined) throw new Error('no llama-server found: set TPX_LLAMA_SERVER');
// llama-server prints its version on stderr.
const versionRun = spawnSync(binary, ['--version'], { encoding: 'utf8' });
const version = `${versionRun.stdout}${versionRun.stderr}`.trim().split('\n')[0] ?? '';
const build = /build (\d+)/.exec(version)?.[1];
if (build === undefined) throw new Error(`cannot read the build from: ${version}`);
const folder = new URL(`../dialects/__fixtures__/llamacpp/b${build}/`, import.meta.url);
// A re-recording replaces the whole set: nothing of an older run stays behind.
rmSync(folder, { recursive: true, force: true });
mkdirSync(folder, { recursive: true });

/** The seed every server runs with (the default of `startLlamaServer`, written down in each meta file). */
const SEED = 42;

/** The Chat Completions body tpx (dialect `llamacpp`) sends for {@link forcedToolRequest}. */
function chatToolRequest(maxTokens: number, stream: boolean): Record<string, unknown> {
  const request = forcedToolRequest(maxTokens);
  return {
    model: request.model,
    messages: request.messages,
    max_tokens: maxTokens,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    tools: request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
    })),
    tool_choice: 'required',
  };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request over a fresh connection, without `accept-encoding`: the body arrives as the server wrote it. */
function exchange(
  server: LlamaServer,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Answer> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        method,
        path,
        agent: false,
        headers: text === undefined ? {} : { 'content-type': 'application/json' },
        timeout: 30_000,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: Buffer.concat(chunks),
          }),
        );
        incoming.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path}: no answer within 30 s`)));
    outgoing.on('error', reject);
    outgoing.end(text);
  });
}

/** Sends one request and writes its answer as `<name>.<json|sse>` plus `<name>.meta.json`. */
async function record(
  server: LlamaServer,
  serverArguments: readonly string[],
  name: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Answer> {
  const answer = await exchange(server, method, path, body);
  const contentType = String(answer.headers['content-type'] ?? '');
  const extension = contentType.startsWith('text/event-stream') ? 'sse' : 'json';
  writeFileSync(new URL(`${name}.${extension}`, folder), answer.body);
  const headers: Record<string, string[]> = {};
  for (const [header, value] of Object.entries(answer.headers)) {
    // The date changes on every run and says nothing about the server.
    if (header === 'date' || value === undefined) continue;
    headers[header] = Array.isArray(value) ? value : [value];
  }
  const meta = {
    recorded: `llama.cpp llama-server b${build} (${version})`,
    server: {
      model: basename(server.modelPath),
      arguments: serverArguments,
    },
    request: { method, path, ...(body === undefined ? {} : { body }) },
    response: { status: answer.status, headers },
  };
  writeFileSync(new URL(`${name}.meta.json`, folder), `${JSON.stringify(meta, null, 2)}\n`);
  console.log(`${answer.status} ${contentType.padEnd(34)} ${name}.${extension}`);
  return answer;
}

/** The server's command line as written into the meta files (the port left out: it changes every run). */
function argumentsFor(model: string, contextSize: number): string[] {
  return [
    '-m',
    `${model}.gguf`,
    '-c',
    String(contextSize),
    '-np',
    '1',
    '-t',
    '1',
    '--seed',
    String(SEED),
    '--jinja',
    '--no-webui',
  ];
}

/**
 * The first `max_tokens` of `candidates` whose Chat Completions answer ends with `length` and a tool call
 * whose arguments are cut as `isWanted` asks (the probes are not recorded).
 */
async function findCut(
  server: LlamaServer,
  candidates: readonly number[],
  isWanted: (cutArguments: string) => boolean,
): Promise<number> {
  for (const maxTokens of candidates) {
    const body = chatToolRequest(maxTokens, false);
    const answer = JSON.parse(
      (await exchange(server, 'POST', '/v1/chat/completions', body)).body.toString('utf8'),
    ) as {
      choices: { finish_reason: string; message: { tool_calls?: { function: { arguments: string } }[] } }[];
    };
    const choice = answer.choices[0];
    const cut = (choice?.message.tool_calls ?? [])
      .map((call) => call.function.arguments)
      .filter((text) => !isCompleteJson(text));
    if (choice?.finish_reason === 'length' && cut.some(isWanted)) return maxTokens;
  }
  throw new Error(`no max_tokens in ${candidates.join(', ')} cut a tool call as wanted`);
}

/** Checks that `/v1/messages` cut a tool call at this `max_tokens` too (the same prompt, the same tokens). */
function expectMessagesCut(answer: Answer): void {
  const message = JSON.parse(answer.body.toString('utf8')) as {
    stop_reason?: string;
    content?: { type: string }[];
  };
  if (message.stop_reason !== 'max_tokens' || !message.content?.some((block) => block.type === 'tool_use'))
    throw new Error(`/v1/messages did not cut a tool call: ${answer.body.toString('utf8')}`);
}

const CUT_CANDIDATES = [40, 60, 80, 100, 120, 140, 160, 180, 200];

// -- tiny-tools, the default context: answers, streams, usage, lists, counts --------------------------
{
  const contextSize = 4096;
  const server = await startLlamaServer({ model: 'tiny-tools', contextSize, seed: SEED });
  const serverArguments = argumentsFor('tiny-tools', contextSize);
  const chat = '/v1/chat/completions';
  try {
    await record(server, serverArguments, 'props', 'GET', '/props');
    await record(server, serverArguments, 'models', 'GET', '/v1/models');
    // The same prompt twice: the first answer with a cold cache, the second with the prompt cached.
    await record(server, serverArguments, 'chat.tool-call', 'POST', chat, chatToolRequest(400, false));
    await record(server, serverArguments, 'chat.tool-call.cached', 'POST', chat, chatToolRequest(400, false));
    await record(server, serverArguments, 'chat.tool-call.stream', 'POST', chat, chatToolRequest(400, true));

    // Two cuts: the only call cut right after its "{", and the only call cut inside its arguments.
    const atBrace = await findCut(server, CUT_CANDIDATES, (text) => text.trim() === '{');
    const inside = await findCut(server, CUT_CANDIDATES, (text) => text.trim().length > 1);
    for (const [name, maxTokens] of [
      ['tool-call-cut', atBrace],
      ['tool-call-cut-in-arguments', inside],
    ] as const) {
      await record(server, serverArguments, `chat.${name}`, 'POST', chat, chatToolRequest(maxTokens, false));
      await record(
        server,
        serverArguments,
        `chat.${name}.stream`,
        'POST',
        chat,
        chatToolRequest(maxTokens, true),
      );
    }

    const messages = '/v1/messages';
    // Once unrecorded, so the recorded pair both find the Messages prompt in the cache.
    await exchange(server, 'POST', messages, forcedToolRequest(400));
    await record(server, serverArguments, 'messages.tool-call', 'POST', messages, forcedToolRequest(400));
    await record(server, serverArguments, 'messages.tool-call.stream', 'POST', messages, {
      ...forcedToolRequest(400),
      stream: true,
    });
    // The same cuts through llama.cpp's own Messages endpoint (its prompt is the chat prompt above).
    for (const [name, maxTokens] of [
      ['tool-call-cut', atBrace],
      ['tool-call-cut-in-arguments', inside],
    ] as const) {
      expectMessagesCut(
        await record(
          server,
          serverArguments,
          `messages.${name}`,
          'POST',
          messages,
          forcedToolRequest(maxTokens),
        ),
      );
      await record(server, serverArguments, `messages.${name}.stream`, 'POST', messages, {
        ...forcedToolRequest(maxTokens),
        stream: true,
      });
    }
    const { max_tokens: _maxTokens, ...countRequest } = forcedToolRequest(1);
    await record(server, serverArguments, 'messages.count-tokens', 'POST', '/v1/messages/count_tokens', {
      ...countRequest,
      system: 'You are a weather assistant.',
    });

    // What tpx's count_tokens asks on this dialect: the templated prompt, then its tokens.
    const { max_tokens: _chatMaxTokens, ...templateRequest } = chatToolRequest(1, false);
    const templated = await record(
      server,
      serverArguments,
      'apply-template',
      'POST',
      '/apply-template',
      templateRequest,
    );
    const { prompt } = JSON.parse(templated.body.toString('utf8')) as { prompt: string };
    await record(server, serverArguments, 'tokenize', 'POST', '/tokenize', {
      content: prompt,
      add_special: true,
      parse_special: true,
    });
  } finally {
    await server.stop();
  }
}

// -- tiny-tools with a small context: the overflow errors ---------------------------------------------
{
  const contextSize = 256;
  const server = await startLlamaServer({ model: 'tiny-tools', contextSize, seed: SEED });
  const serverArguments = argumentsFor('tiny-tools', contextSize);
  const tooLong = {
    model: 'tiny',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'Tell me about the weather. '.repeat(20) }],
  };
  try {
    await record(server, serverArguments, 'props.small-context', 'GET', '/props');
    await record(
      server,
      serverArguments,
      'chat.error.context-overflow',
      'POST',
      '/v1/chat/completions',
      tooLong,
    );
    await record(
      server,
      serverArguments,
      'chat.error.context-overflow.stream',
      'POST',
      '/v1/chat/completions',
      { ...tooLong, stream: true, stream_options: { include_usage: true } },
    );
    await record(server, serverArguments, 'messages.error.context-overflow', 'POST', '/v1/messages', tooLong);
    await record(server, serverArguments, 'messages.error.context-overflow.stream', 'POST', '/v1/messages', {
      ...tooLong,
      stream: true,
    });
  } finally {
    await server.stop();
  }
}

// -- tiny-tools-strict: the template that wants the system message first -------------------------------
{
  const contextSize = 4096;
  const server = await startLlamaServer({ model: 'tiny-tools-strict', contextSize, seed: SEED });
  const serverArguments = argumentsFor('tiny-tools-strict', contextSize);
  const shape = claudeCodeShape();
  const flatten = (content: string | readonly { text: string }[]): string =>
    typeof content === 'string' ? content : content.map((part) => part.text).join('');
  // Claude Code's request as Chat Completions, sent raw: the system prompt first, the system messages
  // inside `messages` left where they are.
  const unfolded = {
    model: shape.model,
    max_tokens: shape.max_tokens,
    messages: [
      { role: 'system', content: flatten(shape.system) },
      ...shape.messages.map((message) => ({ role: message.role, content: flatten(message.content) })),
    ],
  };
  try {
    await record(
      server,
      serverArguments,
      'strict.chat.error.system-not-first',
      'POST',
      '/v1/chat/completions',
      unfolded,
    );
    await record(
      server,
      serverArguments,
      'strict.chat.error.system-not-first.stream',
      'POST',
      '/v1/chat/completions',
      { ...unfolded, stream: true, stream_options: { include_usage: true } },
    );
    await record(
      server,
      serverArguments,
      'strict.messages.error.system-not-first',
      'POST',
      '/v1/messages',
      shape,
    );
  } finally {
    await server.stop();
  }
}

console.log(`recorded ${readdirSync(folder).length} files into ${folder.pathname}`);
