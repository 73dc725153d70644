/**
 * Run-time validators for what Responses API servers send back. They check only the fields the
 * translator reads, with the looseness compatible servers need: nulls where OpenAI omits a field,
 * missing `output_index` / `sequence_number` (llama.cpp), extra keys everywhere.
 *
 * @module
 */
import Type, { type TSchema } from 'typebox';
import { compileChecker as compile } from './compile-checker.js';
import { describeErrors } from './format-errors.js';
import type { ResponsesResponse, ResponsesStreamEvent } from './responses.js';
import type { Validated } from './validate-messages.js';

const Maybe = (schema: TSchema) => Type.Optional(Type.Union([schema, Type.Null()]));
const Count = () => Maybe(Type.Number());

const Usage = Type.Object({
  input_tokens: Count(),
  output_tokens: Count(),
  total_tokens: Count(),
  input_tokens_details: Maybe(Type.Object({ cached_tokens: Count() })),
  output_tokens_details: Maybe(Type.Object({ reasoning_tokens: Count() })),
});

const OutputItem = Type.Object({
  type: Maybe(Type.String()),
  id: Maybe(Type.String()),
  content: Maybe(Type.Array(Type.Unknown())),
  call_id: Maybe(Type.String()),
  name: Maybe(Type.String()),
  arguments: Type.Optional(Type.Unknown()),
  summary: Maybe(Type.Array(Type.Unknown())),
  encrypted_content: Maybe(Type.String()),
});

const ResponseSchema = Type.Object({
  id: Maybe(Type.String()),
  status: Maybe(Type.String()),
  output: Maybe(Type.Array(OutputItem)),
  usage: Maybe(Usage),
  error: Type.Optional(Type.Unknown()),
  incomplete_details: Maybe(Type.Object({ reason: Maybe(Type.String()) })),
});

const EventSchema = Type.Object({
  type: Type.String(),
  output_index: Maybe(Type.Integer({ minimum: 0 })),
  item_id: Maybe(Type.String()),
  summary_index: Maybe(Type.Integer({ minimum: 0 })),
  item: Maybe(OutputItem),
  response: Maybe(ResponseSchema),
});

const responseValidator = compile(ResponseSchema);
const eventValidator = compile(EventSchema);

/** Validates a non-streaming response object (and the `response` of a terminal stream event). */
export function validateResponsesResponse(value: unknown): Validated<ResponsesResponse> {
  if (responseValidator.check(value)) return { ok: true, value: value as ResponsesResponse };
  return { ok: false, message: describeErrors(responseValidator.errors(value)) };
}

/** Validates one parsed stream event. */
export function validateResponsesStreamEvent(value: unknown): Validated<ResponsesStreamEvent> {
  if (eventValidator.check(value)) return { ok: true, value: value as ResponsesStreamEvent };
  return { ok: false, message: describeErrors(eventValidator.errors(value)) };
}
