/**
 * The benchmark behind our choice of run-time validator for caller requests.
 *
 * The same checks of a Messages request — the envelope (model, max_tokens, messages with role and
 * content, system, tools, tool_choice, thinking, metadata, …; unknown fields accepted and kept), then
 * each content block by the schema of its own `type` (text, image, document, tool_use, tool_result and
 * the blocks inside it, thinking, redacted_thinking; unknown types accepted) — written for four
 * libraries, and driven by one loop so that only the checking differs:
 *
 * - TypeBox, compiled (`typebox/compile`), errors described by our own `describeErrors`;
 * - Ajv, compiling the JSON Schema that the TypeBox definitions are;
 * - zod 4 (`safeParse` on loose objects: it returns a copy, which is how zod checks);
 * - valibot 1 (`safeParse` on loose objects, `abortEarly`, which is its fastest mode);
 *
 * plus the library's own `validateMessagesRequest`, which is the TypeBox variant as shipped.
 *
 * Inputs come from a deterministic generator: a small request (one turn), a medium one (40 turns after
 * the prompt, 20 tool calls) and a large one (400 turns, 200 tool calls, about 1 MB), all valid; and the
 * medium one with the `id` of its last tool_use removed, which every validator must walk to the end to
 * find (the error path, message included). Each task is timed with tinybench; the table shows the median
 * operations per second and how many times slower than the fastest each one is, per input.
 *
 * Run: `npx tsx bench/validators.ts`. It prints the table and writes nothing.
 *
 * @module
 */
import { Ajv, type ErrorObject } from 'ajv';
import { Bench } from 'tinybench';
import Type, { type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import * as v from 'valibot';
import * as z from 'zod';
import { describeErrors, formatPath } from '../src/protocol/format-errors.js';
import { validateMessagesRequest } from '../src/protocol/validate-messages.js';

// ---------------------------------------------------------------------------------------------------
// One driver for every library

/** Checks a value: `undefined` when it is valid, else the first problem as `path: what is wrong`. */
type Check = (value: unknown) => string | undefined;

interface Variant {
  name: string;
  envelope: Check;
  /** One check per known block type, of a block on its own; paths are relative to the block. */
  blocks: ReadonlyMap<string, Check>;
}

interface RequestShape {
  messages: { content: string | { type: string; content?: unknown }[] }[];
  tools?: { name?: unknown; type?: unknown }[];
  tool_choice?: { type: string; name?: unknown };
}

/** The two-step check of `validateMessagesRequest`, with the variant's envelope and block checks. */
function validateWith(variant: Variant, value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'the request body must be a JSON object';
  }
  const problem = variant.envelope(value);
  if (problem !== undefined) return problem;
  const request = value as RequestShape;
  const tools = request.tools ?? [];
  for (let t = 0; t < tools.length; t++) {
    const tool = tools[t]!;
    if (
      tool.name === undefined &&
      (tool.type === undefined || tool.type === null || tool.type === 'custom')
    ) {
      return `tools[${t}].name: is required`;
    }
  }
  if (request.tool_choice?.type === 'tool' && typeof request.tool_choice.name !== 'string') {
    return 'tool_choice.name: must be string';
  }
  for (let m = 0; m < request.messages.length; m++) {
    const content = request.messages[m]!.content;
    if (typeof content === 'string') continue;
    for (let b = 0; b < content.length; b++) {
      const block = content[b]!;
      const blockProblem = variant.blocks.get(block.type)?.(block);
      if (blockProblem !== undefined) return `messages[${m}].content[${b}].${blockProblem}`;
      if (block.type === 'tool_result' && Array.isArray(block.content)) {
        const inner = block.content as { type: string }[];
        for (let i = 0; i < inner.length; i++) {
          const innerProblem = variant.blocks.get(inner[i]!.type)?.(inner[i]);
          if (innerProblem !== undefined) return `messages[${m}].content[${b}].content[${i}].${innerProblem}`;
        }
      }
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// TypeBox (and the same schemas as JSON Schema, for Ajv)

const TypedObject = Type.Object({ type: Type.String() });
const AnyObject = Type.Record(Type.String(), Type.Unknown());
const Nullable = (schema: TSchema) => Type.Union([schema, Type.Null()]);

const TypeBoxText = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const TYPEBOX_BLOCKS: Record<string, TSchema> = {
  text: TypeBoxText,
  image: Type.Object({ type: Type.Literal('image'), source: TypedObject }),
  document: Type.Object({ type: Type.Literal('document'), source: TypedObject }),
  tool_use: Type.Object({
    type: Type.Literal('tool_use'),
    id: Type.String(),
    name: Type.String(),
    input: AnyObject,
  }),
  tool_result: Type.Object({
    type: Type.Literal('tool_result'),
    tool_use_id: Type.String(),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(TypedObject)])),
    is_error: Type.Optional(Type.Boolean()),
  }),
  thinking: Type.Object({
    type: Type.Literal('thinking'),
    thinking: Type.String(),
    signature: Type.String(),
  }),
  redacted_thinking: Type.Object({ type: Type.Literal('redacted_thinking'), data: Type.String() }),
};

const TypeBoxEnvelope = Type.Object({
  model: Type.String({ minLength: 1 }),
  max_tokens: Type.Integer({ minimum: 0 }),
  messages: Type.Array(
    Type.Object({
      role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')]),
      content: Type.Union([Type.String(), Type.Array(TypedObject)]),
    }),
  ),
  system: Type.Optional(Type.Union([Type.String(), Type.Array(TypeBoxText)])),
  stop_sequences: Type.Optional(Type.Array(Type.String())),
  stream: Type.Optional(Type.Boolean()),
  temperature: Type.Optional(Type.Number()),
  top_p: Type.Optional(Type.Number()),
  top_k: Type.Optional(Type.Integer()),
  tools: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.Optional(Type.String({ minLength: 1 })),
        type: Type.Optional(Nullable(Type.String())),
      }),
    ),
  ),
  tool_choice: Type.Optional(
    Type.Object({
      type: Type.Union([
        Type.Literal('auto'),
        Type.Literal('any'),
        Type.Literal('none'),
        Type.Literal('tool'),
      ]),
      disable_parallel_tool_use: Type.Optional(Type.Boolean()),
    }),
  ),
  thinking: Type.Optional(TypedObject),
  metadata: Type.Optional(Type.Object({ user_id: Type.Optional(Nullable(Type.String())) })),
  output_config: Type.Optional(AnyObject),
});

function typeboxCheck(schema: TSchema): Check {
  const validator = Compile(schema);
  return (value) => (validator.Check(value) ? undefined : describeErrors(validator.Errors(value), 1));
}

const ajv = new Ajv({ allErrors: false, strict: false });

function ajvMessage(error: ErrorObject | undefined): string {
  if (error === undefined) return '(root): is invalid';
  const params = error.params as { missingProperty?: string };
  if (error.keyword === 'required' && params.missingProperty !== undefined) {
    return `${formatPath(`${error.instancePath}/${params.missingProperty}`)}: is required`;
  }
  return `${formatPath(error.instancePath)}: ${error.message ?? 'is invalid'}`;
}

function ajvCheck(schema: TSchema): Check {
  const validate = ajv.compile(schema);
  return (value) => (validate(value) ? undefined : ajvMessage(validate.errors?.[0]));
}

// ---------------------------------------------------------------------------------------------------
// zod 4

const ZodTyped = z.looseObject({ type: z.string() });
const ZodAnyObject = z.record(z.string(), z.unknown());
const ZodText = z.looseObject({ type: z.literal('text'), text: z.string() });
const ZOD_BLOCKS: Record<string, z.ZodType> = {
  text: ZodText,
  image: z.looseObject({ type: z.literal('image'), source: ZodTyped }),
  document: z.looseObject({ type: z.literal('document'), source: ZodTyped }),
  tool_use: z.looseObject({
    type: z.literal('tool_use'),
    id: z.string(),
    name: z.string(),
    input: ZodAnyObject,
  }),
  tool_result: z.looseObject({
    type: z.literal('tool_result'),
    tool_use_id: z.string(),
    content: z.union([z.string(), z.array(ZodTyped)]).optional(),
    is_error: z.boolean().optional(),
  }),
  thinking: z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() }),
  redacted_thinking: z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() }),
};

const ZodEnvelope = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.int().min(0),
  messages: z.array(
    z.looseObject({
      role: z.enum(['user', 'assistant', 'system']),
      content: z.union([z.string(), z.array(ZodTyped)]),
    }),
  ),
  system: z.union([z.string(), z.array(ZodText)]).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  top_k: z.int().optional(),
  tools: z
    .array(z.looseObject({ name: z.string().min(1).optional(), type: z.string().nullable().optional() }))
    .optional(),
  tool_choice: z
    .looseObject({
      type: z.enum(['auto', 'any', 'none', 'tool']),
      disable_parallel_tool_use: z.boolean().optional(),
    })
    .optional(),
  thinking: ZodTyped.optional(),
  metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  output_config: ZodAnyObject.optional(),
});

function zodCheck(schema: z.ZodType): Check {
  return (value) => {
    const result = schema.safeParse(value);
    if (result.success) return undefined;
    const issue = result.error.issues[0];
    const pointer = (issue?.path ?? []).map((key) => `/${String(key)}`).join('');
    return `${formatPath(pointer)}: ${issue?.message ?? 'is invalid'}`;
  };
}

// ---------------------------------------------------------------------------------------------------
// valibot 1

const ValibotTyped = v.looseObject({ type: v.string() });
const ValibotAnyObject = v.record(v.string(), v.unknown());
const ValibotText = v.looseObject({ type: v.literal('text'), text: v.string() });
const VALIBOT_BLOCKS: Record<string, v.GenericSchema> = {
  text: ValibotText,
  image: v.looseObject({ type: v.literal('image'), source: ValibotTyped }),
  document: v.looseObject({ type: v.literal('document'), source: ValibotTyped }),
  tool_use: v.looseObject({
    type: v.literal('tool_use'),
    id: v.string(),
    name: v.string(),
    input: ValibotAnyObject,
  }),
  tool_result: v.looseObject({
    type: v.literal('tool_result'),
    tool_use_id: v.string(),
    content: v.optional(v.union([v.string(), v.array(ValibotTyped)])),
    is_error: v.optional(v.boolean()),
  }),
  thinking: v.looseObject({ type: v.literal('thinking'), thinking: v.string(), signature: v.string() }),
  redacted_thinking: v.looseObject({ type: v.literal('redacted_thinking'), data: v.string() }),
};

const ValibotEnvelope = v.looseObject({
  model: v.pipe(v.string(), v.minLength(1)),
  max_tokens: v.pipe(v.number(), v.integer(), v.minValue(0)),
  messages: v.array(
    v.looseObject({
      role: v.picklist(['user', 'assistant', 'system']),
      content: v.union([v.string(), v.array(ValibotTyped)]),
    }),
  ),
  system: v.optional(v.union([v.string(), v.array(ValibotText)])),
  stop_sequences: v.optional(v.array(v.string())),
  stream: v.optional(v.boolean()),
  temperature: v.optional(v.number()),
  top_p: v.optional(v.number()),
  top_k: v.optional(v.pipe(v.number(), v.integer())),
  tools: v.optional(
    v.array(
      v.looseObject({
        name: v.optional(v.pipe(v.string(), v.minLength(1))),
        type: v.optional(v.nullable(v.string())),
      }),
    ),
  ),
  tool_choice: v.optional(
    v.looseObject({
      type: v.picklist(['auto', 'any', 'none', 'tool']),
      disable_parallel_tool_use: v.optional(v.boolean()),
    }),
  ),
  thinking: v.optional(ValibotTyped),
  metadata: v.optional(v.looseObject({ user_id: v.optional(v.nullable(v.string())) })),
  output_config: v.optional(ValibotAnyObject),
});

function valibotCheck(schema: v.GenericSchema): Check {
  return (value) => {
    const result = v.safeParse(schema, value, { abortEarly: true });
    if (result.success) return undefined;
    const issue = result.issues[0];
    const pointer = (issue.path ?? []).map((item) => `/${String(item.key)}`).join('');
    return `${formatPath(pointer)}: ${issue.message}`;
  };
}

// ---------------------------------------------------------------------------------------------------
// The variants

const mapBlocks = <S>(schemas: Record<string, S>, make: (schema: S) => Check): ReadonlyMap<string, Check> =>
  new Map(Object.entries(schemas).map(([type, schema]) => [type, make(schema)]));

const variants: { name: string; validate: (value: unknown) => string | undefined }[] = [
  {
    name: 'validateMessagesRequest (TypeBox, shipped)',
    validate: (value) => {
      const result = validateMessagesRequest(value);
      return result.ok ? undefined : result.message;
    },
  },
  ...(
    [
      {
        name: 'TypeBox compiled',
        envelope: typeboxCheck(TypeBoxEnvelope),
        blocks: mapBlocks(TYPEBOX_BLOCKS, typeboxCheck),
      },
      {
        name: 'Ajv compiled',
        envelope: ajvCheck(TypeBoxEnvelope),
        blocks: mapBlocks(TYPEBOX_BLOCKS, ajvCheck),
      },
      { name: 'zod 4', envelope: zodCheck(ZodEnvelope), blocks: mapBlocks(ZOD_BLOCKS, zodCheck) },
      {
        name: 'valibot 1',
        envelope: valibotCheck(ValibotEnvelope),
        blocks: mapBlocks(VALIBOT_BLOCKS, valibotCheck),
      },
    ] satisfies Variant[]
  ).map((variant) => ({ name: variant.name, validate: (value: unknown) => validateWith(variant, value) })),
];

// ---------------------------------------------------------------------------------------------------
// Inputs

/** A small deterministic generator (mulberry32), so every run checks the same bytes. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  'the of and to in is that for it as with was on be by this are from at or an not have file test'.split(' ');

function makeText(random: () => number, bytes: number): string {
  let text = '';
  while (text.length < bytes) text += `${WORDS[Math.floor(random() * WORDS.length)]} `;
  return text.slice(0, bytes);
}

/**
 * A request with the prompt, then `turns` turns alternating assistant (thinking, text, one tool_use)
 * and user (the tool_result, about `resultBytes` of text; every tenth one as blocks with an image).
 */
function makeRequest(turns: number, resultBytes: number, seed: number): Record<string, unknown> {
  const random = generator(seed);
  const messages: Record<string, unknown>[] = [
    {
      role: 'user',
      content: [{ type: 'text', text: makeText(random, 400), cache_control: { type: 'ephemeral' } }],
    },
  ];
  for (let turn = 0; turn < turns; turn++) {
    const call = Math.floor(turn / 2);
    const id = `toolu_${String(call).padStart(6, '0')}${Math.floor(random() * 1e9).toString(36)}`;
    if (turn % 2 === 0) {
      messages.push({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: makeText(random, 300), signature: makeText(random, 120) },
          { type: 'text', text: makeText(random, 200) },
          {
            type: 'tool_use',
            id,
            name: `tool_${call % 12}`,
            input: { path: makeText(random, 40), line: call },
          },
        ],
      });
    } else {
      const previous = messages[messages.length - 1]!['content'] as { id?: string }[];
      const toolUseId = previous[2]!.id!;
      const content =
        call % 10 === 9
          ? [
              { type: 'text', text: makeText(random, resultBytes - 200) },
              {
                type: 'image',
                source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo='.repeat(12) },
              },
            ]
          : makeText(random, resultBytes);
      messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUseId, content }] });
    }
  }
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 16000,
    stream: true,
    system: [{ type: 'text', text: makeText(random, 2000), cache_control: { type: 'ephemeral' } }],
    messages,
    tools: Array.from({ length: 12 }, (_, index) => ({
      name: `tool_${index}`,
      description: makeText(random, 200),
      input_schema: { type: 'object', properties: { path: { type: 'string' }, line: { type: 'integer' } } },
      ...(index === 11 ? { defer_loading: true } : {}),
    })),
    tool_choice: { type: 'auto' },
    thinking: { type: 'enabled', budget_tokens: 4096 },
    output_config: { effort: 'high' },
    metadata: { user_id: 'user_bench' },
    context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
  };
}

const small = makeRequest(0, 0, 1);
const medium = makeRequest(40, 4000, 2);
const large = makeRequest(400, 4000, 3);
const invalid = structuredClone(medium);
{
  const messages = invalid['messages'] as { content: Record<string, unknown>[] }[];
  delete messages[messages.length - 2]!.content[2]!['id'];
}

const inputs: { name: string; value: unknown; isValid: boolean }[] = [
  { name: 'small', value: small, isValid: true },
  { name: 'medium', value: medium, isValid: true },
  { name: 'large', value: large, isValid: true },
  { name: 'medium, invalid', value: invalid, isValid: false },
];

// Every variant must agree with the shipped validator before its speed means anything.
for (const input of inputs) {
  for (const variant of variants) {
    const problem = variant.validate(input.value);
    if (
      (problem === undefined) !== input.isValid ||
      (problem !== undefined && !problem.includes('messages[39]'))
    ) {
      throw new Error(`${variant.name} on the ${input.name} input: ${problem ?? 'accepted'}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Measure and print

const kib = (value: unknown) => `${(JSON.stringify(value).length / 1024).toFixed(1)} KiB`;
const medians = new Map<string, Map<string, number>>();

/**
 * How many calls one timed sample makes: enough for about 50 µs, because a single call on the small
 * input takes a fraction of a microsecond, below what the clock resolves.
 */
function callsPerSample(validate: () => unknown): number {
  const calls = 200;
  const start = performance.now();
  for (let call = 0; call < calls; call++) validate();
  const perCallMs = (performance.now() - start) / calls;
  return Math.max(1, Math.ceil(0.05 / perCallMs));
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

// Several short rounds, each timing every variant on every input, with the order of the variants
// rotated: a change in machine load during the run then falls on all variants alike. A variant's
// result for an input is the median, over the rounds, of its median throughput in each round.
const ROUNDS = 5;
const samples = new Map<string, number[]>(); // `${variant}\u0000${input}` → per-round medians (ops/s)
for (let round = 0; round < ROUNDS; round++) {
  const order = [...variants.slice(round % variants.length), ...variants.slice(0, round % variants.length)];
  for (const input of inputs) {
    const bench = new Bench({ time: 200, warmupTime: 50 });
    const batches = new Map<string, number>();
    for (const variant of order) {
      const validate = () => variant.validate(input.value);
      const calls = callsPerSample(validate);
      batches.set(variant.name, calls);
      bench.add(variant.name, () => {
        for (let call = 0; call < calls; call++) validate();
      });
    }
    await bench.run();
    for (const task of bench.tasks) {
      const key = `${task.name}\u0000${input.name}`;
      const opsPerSecond = (task.result?.throughput.p50 ?? Number.NaN) * (batches.get(task.name) ?? 1);
      samples.set(key, [...(samples.get(key) ?? []), opsPerSecond]);
    }
  }
}
for (const variant of variants) {
  medians.set(
    variant.name,
    new Map(
      inputs.map((input) => [input.name, median(samples.get(`${variant.name}\u0000${input.name}`) ?? [])]),
    ),
  );
}

const header = ['validator', ...inputs.map((input) => `${input.name} (${kib(input.value)})`)];
const rows = [...medians].map(([name, row]) => [
  name,
  ...inputs.map((input) => {
    const ops = row.get(input.name) ?? Number.NaN;
    const fastest = Math.max(...[...medians.values()].map((other) => other.get(input.name) ?? 0));
    return `${Math.round(ops).toLocaleString('en-US')} ops/s  ×${(fastest / ops).toFixed(2)}`;
  }),
]);
const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)));
const line = (cells: string[]) =>
  `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
console.log(`Median operations per second, and ×(fastest / this) per input. Node ${process.version}.`);
console.log(line(header));
console.log(line(widths.map((width) => '-'.repeat(width))));
for (const row of rows) console.log(line(row));
