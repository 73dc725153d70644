/**
 * Benchmark 1: translation against the JSON floor.
 *
 * Request path (what the `tpx` provider does with a caller's body before it goes upstream):
 * `JSON.parse(caller bytes)` → `validateMessagesRequest` → `translateRequest` → `JSON.stringify(body)`.
 * Response path (what it does with the upstream answer): `JSON.parse(upstream bytes)` →
 * `validateChatCompletionResponse` → `translateResponse` → `JSON.stringify(message)`.
 * The floor of each is `JSON.stringify(JSON.parse(bytes))` of the same bytes: the least any proxy that
 * looks inside a body must pay. Target: translation ≤ 1.5× its floor.
 *
 * One extra row per size, without a target, adds `checkPairing` to the request path, because the
 * transport runs it on every request too.
 *
 * @module
 */
import type { MessagesRequest } from '../../src/protocol/messages.js';
import { validateChatCompletionResponse } from '../../src/protocol/validate-chat-completions.js';
import { validateMessagesRequest } from '../../src/protocol/validate-messages.js';
import { checkPairing } from '../../src/translate/check-pairing.js';
import { translateRequest } from '../../src/translate/translate-request.js';
import { translateResponse } from '../../src/translate/translate-response.js';
import type { ToolNameMap } from '../../src/translate/tool-name-codec.js';
import { medianOf, pairedRatio, timeInRounds, type RoundOptions, type TimedTask } from '../harness/rounds.js';
import { formatBytes, formatDuration, formatSpread, round, verdict } from '../harness/stats.js';
import type { Table } from '../harness/table.js';
import { completion } from '../inputs/completions.js';
import { CONVERSATION_SIZES, conversation, type ConversationSize } from '../inputs/conversations.js';

/** The target: translation at most this many times its floor. */
export const TRANSLATION_TARGET = 1.5;

export interface TranslationRow {
  path: 'request' | 'request+pairing' | 'response';
  size: ConversationSize;
  bytes: number;
  floorMs: number;
  translationMs: number;
  /** Median of the per-round ratios translation / floor. */
  ratio: number;
  /** Quartiles of the per-round ratios. */
  ratioP25: number;
  ratioP75: number;
  target: number | null;
  met: boolean | null;
}

export interface TranslationResult {
  rows: TranslationRow[];
  table: Table;
}

/** The request path, once: caller bytes in, upstream bytes out. */
export function requestPath(bytes: string): string {
  const validated = validateMessagesRequest(JSON.parse(bytes));
  if (!validated.ok) throw new Error(`benchmark request is invalid: ${validated.message}`);
  const request = validated.value;
  return JSON.stringify(translateRequest(request, { model: request.model }).body);
}

function requestPathWithPairing(bytes: string): string {
  const validated = validateMessagesRequest(JSON.parse(bytes));
  if (!validated.ok) throw new Error(`benchmark request is invalid: ${validated.message}`);
  const request = validated.value;
  checkPairing(request.messages);
  return JSON.stringify(translateRequest(request, { model: request.model }).body);
}

/** The response path, once: upstream bytes in, caller bytes out. */
export function responsePath(bytes: string, toolNames: ToolNameMap): string {
  const validated = validateChatCompletionResponse(JSON.parse(bytes));
  if (!validated.ok) throw new Error(`benchmark response is invalid: ${validated.message}`);
  let next = 0;
  const message = translateResponse(validated.value, {
    requestModel: 'claude-sonnet-4-5',
    toolNames,
    generateId: () => `bench${++next}`,
  });
  return JSON.stringify(message);
}

const floor = (bytes: string): string => JSON.stringify(JSON.parse(bytes));

/** Checks that each path does the work it claims before anything is timed. */
function checkInputs(
  request: MessagesRequest,
  requestBytes: string,
  responseBytes: string,
  toolNames: ToolNameMap,
): void {
  const translated = JSON.parse(requestPath(requestBytes)) as { messages: unknown[] };
  if (translated.messages.length < request.messages.length) {
    throw new Error(
      `request translation lost messages: ${translated.messages.length} < ${request.messages.length}`,
    );
  }
  checkPairing(request.messages);
  const upstream = JSON.parse(responseBytes) as { choices: { message: { tool_calls?: unknown[] } }[] };
  const message = JSON.parse(responsePath(responseBytes, toolNames)) as { content: { type: string }[] };
  const toolUses = message.content.filter((block) => block.type === 'tool_use').length;
  if (toolUses !== (upstream.choices[0]!.message.tool_calls?.length ?? 0)) {
    throw new Error(`response translation produced ${toolUses} tool_use blocks`);
  }
}

/** Runs benchmark 1. */
export function runTranslation(options: RoundOptions): TranslationResult {
  const groups: TimedTask[][] = [];
  const inputs = new Map<ConversationSize, { requestBytes: string; responseBytes: string }>();
  for (const size of CONVERSATION_SIZES) {
    const request = conversation(size);
    const requestBytes = JSON.stringify(request);
    const responseBytes = JSON.stringify(completion(size));
    const { toolNames } = translateRequest(request, { model: request.model });
    checkInputs(request, requestBytes, responseBytes, toolNames);
    inputs.set(size, { requestBytes, responseBytes });
    groups.push(
      [
        { name: `request floor ${size}`, fn: () => floor(requestBytes) },
        { name: `request translation ${size}`, fn: () => requestPath(requestBytes) },
        { name: `request+pairing translation ${size}`, fn: () => requestPathWithPairing(requestBytes) },
      ],
      [
        { name: `response floor ${size}`, fn: () => floor(responseBytes) },
        { name: `response translation ${size}`, fn: () => responsePath(responseBytes, toolNames) },
      ],
    );
  }
  const samples = timeInRounds(groups, options);

  const rows: TranslationRow[] = [];
  for (const path of ['request', 'request+pairing', 'response'] as const) {
    const floorPath = path === 'response' ? 'response' : 'request';
    for (const size of CONVERSATION_SIZES) {
      const { requestBytes, responseBytes } = inputs.get(size)!;
      const spread = pairedRatio(samples, `${path} translation ${size}`, `${floorPath} floor ${size}`);
      const ratio = spread.median;
      const hasTarget = path !== 'request+pairing';
      rows.push({
        path,
        size,
        bytes: (path === 'response' ? responseBytes : requestBytes).length,
        floorMs: round(medianOf(samples, `${floorPath} floor ${size}`)),
        translationMs: round(medianOf(samples, `${path} translation ${size}`)),
        ratio: round(ratio, 3),
        ratioP25: round(spread.p25, 3),
        ratioP75: round(spread.p75, 3),
        target: hasTarget ? TRANSLATION_TARGET : null,
        met: hasTarget ? ratio <= TRANSLATION_TARGET : null,
      });
    }
  }
  const table: Table = {
    title: 'Translation vs the JSON floor (parse + stringify of the same bytes)',
    header: [
      'path',
      'size',
      'body',
      'floor (median)',
      'translation (median)',
      'ratio (IQR)',
      `target ≤ ${TRANSLATION_TARGET}×`,
    ],
    rows: rows.map((row) => [
      row.path,
      row.size,
      formatBytes(row.bytes),
      formatDuration(row.floorMs),
      formatDuration(row.translationMs),
      formatSpread({ median: row.ratio, p25: row.ratioP25, p75: row.ratioP75 }),
      row.target === null ? '(info)' : verdict(row.ratio, { max: row.target }),
    ]),
    notes: [
      'request = JSON.parse → validateMessagesRequest → translateRequest → JSON.stringify;',
      'request+pairing adds checkPairing (the transport runs it too); response = JSON.parse →',
      'validateChatCompletionResponse → translateResponse → JSON.stringify. Ratio: median of the per-round ratios,',
      'with their interquartile range; times: median over rounds of the mean time per call.',
    ],
  };
  return { rows, table };
}
