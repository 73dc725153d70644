/**
 * Where the time of each translation path goes, stage by stage, for the three sizes: `JSON.parse`,
 * validation, translation, `JSON.stringify` (the transport's `checkPairing` shown apart). A CPU
 * profile cannot show this split: V8 counts `JSON.parse` and `JSON.stringify` as self time of their
 * caller. Each stage is timed on its own, in interleaved rounds, as in the benchmark itself.
 *
 * Run: `npx tsx bench/profile/breakdown.ts`.
 *
 * @module
 */
import { validateChatCompletionResponse } from '../../src/protocol/validate-chat-completions.js';
import { validateMessagesRequest } from '../../src/protocol/validate-messages.js';
import { checkPairing } from '../../src/translate/check-pairing.js';
import { translateRequest } from '../../src/translate/translate-request.js';
import { translateResponse } from '../../src/translate/translate-response.js';
import type { ChatCompletionResponse } from '../../src/protocol/chat-completions.js';
import type { MessagesRequest } from '../../src/protocol/messages.js';
import { medianOf, timeInRounds, type TimedTask } from '../harness/rounds.js';
import { formatDuration } from '../harness/stats.js';
import { renderText } from '../harness/table.js';
import { completion } from '../inputs/completions.js';
import { CONVERSATION_SIZES, conversation } from '../inputs/conversations.js';

const groups: TimedTask[][] = [];
const stages = new Map<string, string[]>();
for (const size of CONVERSATION_SIZES) {
  const request = conversation(size);
  const requestBytes = JSON.stringify(request);
  const requestValue = JSON.parse(requestBytes) as MessagesRequest;
  const translated = translateRequest(requestValue, { model: request.model });
  const responseBytes = JSON.stringify(completion(size));
  const responseValue = JSON.parse(responseBytes) as ChatCompletionResponse;
  let next = 0;
  const context = {
    requestModel: request.model,
    toolNames: translated.toolNames,
    generateId: () => `bench${++next}`,
  };
  const message = translateResponse(responseValue, context);
  const requestTasks: TimedTask[] = [
    { name: `request ${size}: JSON.parse`, fn: () => JSON.parse(requestBytes) },
    { name: `request ${size}: validateMessagesRequest`, fn: () => validateMessagesRequest(requestValue) },
    { name: `request ${size}: checkPairing`, fn: () => checkPairing(requestValue.messages) },
    {
      name: `request ${size}: translateRequest`,
      fn: () => translateRequest(requestValue, { model: request.model }),
    },
    { name: `request ${size}: JSON.stringify`, fn: () => JSON.stringify(translated.body) },
    { name: `request ${size}: JSON.stringify (floor)`, fn: () => JSON.stringify(requestValue) },
  ];
  const responseTasks: TimedTask[] = [
    { name: `response ${size}: JSON.parse`, fn: () => JSON.parse(responseBytes) },
    {
      name: `response ${size}: validateChatCompletionResponse`,
      fn: () => validateChatCompletionResponse(responseValue),
    },
    { name: `response ${size}: translateResponse`, fn: () => translateResponse(responseValue, context) },
    { name: `response ${size}: JSON.stringify`, fn: () => JSON.stringify(message) },
    { name: `response ${size}: JSON.stringify (floor)`, fn: () => JSON.stringify(responseValue) },
  ];
  groups.push(requestTasks, responseTasks);
  stages.set(
    `request ${size}`,
    requestTasks.map((task) => task.name),
  );
  stages.set(
    `response ${size}`,
    responseTasks.map((task) => task.name),
  );
}

const samples = timeInRounds(groups, { rounds: 20, batchMs: 10, warmupMs: 100 });
const rows: string[][] = [];
for (const [path, names] of stages) {
  for (const name of names)
    rows.push([path, name.slice(path.length + 2), formatDuration(medianOf(samples, name))]);
}
process.stdout.write(
  renderText({
    title: 'Translation paths, stage by stage (median over rounds of the mean time per call)',
    header: ['path', 'stage', 'time'],
    rows,
  }),
);
