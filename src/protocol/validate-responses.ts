/**
 * Run-time validators for what Responses API servers send back. They check only the fields the
 * translator reads, with the looseness compatible servers need: nulls where OpenAI omits a field,
 * missing `output_index` / `sequence_number` (llama.cpp), extra keys everywhere.
 *
 * @module
 */
import Type from 'typebox';
import { compileValidator, Count, Maybe } from './compile-checker.js';
import type { ResponsesResponse, ResponsesStreamEvent } from './responses.js';

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

/** Validates a non-streaming response object (and the `response` of a terminal stream event). */
export const validateResponsesResponse = compileValidator<ResponsesResponse>(ResponseSchema);

/** Validates one parsed stream event. */
export const validateResponsesStreamEvent = compileValidator<ResponsesStreamEvent>(EventSchema);
