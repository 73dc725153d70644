/**
 * Replays behaviours of the routes model (`model-routes.ts`, `spec/TpxRoutes.tla`) against the real
 * transport: `createTransport({ routes })` over two scripted upstreams on loopback, one call per model
 * exchange, each attempt answered as the behaviour says. After every exchange the implementation's
 * observable state is compared with the model's:
 *
 * - which upstream each attempt went to, in order (none for `NoTarget`);
 * - the outcome: a delivered message under the requested model, naming the upstream that answered, or
 *   a `TransportError` (a stream that broke after its first event keeps its events, never a second
 *   upstream's);
 * - on the wire, the `tool_call_id`s of the caller's tool results: the ids the upstream that emitted them
 *   wrote, whichever upstream receives them now (`PairingAcrossUpstreams`);
 * - each upstream's breaker (`transport.upstreamStates()`): state and consecutive failures.
 *
 * @module
 */
import { isTransportError } from '../../src/errors.js';
import type { Message, MessageStreamEvent } from '../../src/protocol/messages.js';
import { createTransport } from '../../src/transport/create-transport.js';
import type { ModelTransport, ResponseInfo } from '../../src/transport/types.js';
import {
  startScriptedServer,
  step as serverStep,
  type ScriptedServer,
  type Step as ServerStep,
} from '../helpers/scripted-server.js';
import {
  Route,
  target,
  type RoutesConstants,
  type RoutesState,
  type RoutesStep,
  type Upstream,
} from './model-routes.js';
import { TOOL, failureStep, providerToolId, replyStep } from './replay-upstream.js';

/** The two upstreams, and the order in which requests reached them (shared by both servers' scripts). */
export interface RoutesUpstreams {
  readonly servers: Readonly<Record<Upstream, ScriptedServer>>;
  /** Each server's answers still to give, in order; the replay fills them before each call. */
  readonly queues: Record<Upstream, ServerStep[]>;
  /** Every request received, by upstream, in arrival order, with its body. */
  readonly arrivals: { readonly upstream: Upstream; readonly json: unknown }[];
}

const COOL_DOWN_MS = 1_000;
const MODELS: Readonly<Record<Upstream, string>> = { u1: 'model-one', u2: 'model-two' };

function describe(error: unknown): string {
  return error instanceof Error ? error.message : JSON.stringify(error);
}

/** A divergence between the model and the implementation. */
export class Divergence extends Error {}

function expectEqual(what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Divergence(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

/** The transport of one behaviour: fresh breakers, a clock the replay moves. */
function transportFor(
  constants: RoutesConstants,
  upstreams: RoutesUpstreams,
  clock: { now: number },
): ModelTransport {
  const entry = (upstream: Upstream) => ({
    baseUrl: `${upstreams.servers[upstream].url}/v1`,
    token: `token-${upstream}`,
  });
  return createTransport({
    env: {},
    routes: {
      upstreams: { u1: entry('u1'), u2: entry('u2') },
      routes: [
        { match: { model: '*haiku*' }, to: `u1:${MODELS.u1}` },
        { to: `u2:${MODELS.u2}`, fallback: [`u1:${MODELS.u1}`] },
      ],
      breaker: { failures: constants.failures, coolDownMs: COOL_DOWN_MS },
    },
    maxRetries: constants.maxRetries,
    now: () => clock.now,
    sleep: async () => {},
  });
}

/** What one exchange of the model consists of: its steps from `CallerSend` until idle again. */
function exchangeSteps(steps: readonly RoutesStep[], from: number): RoutesStep[] {
  const taken: RoutesStep[] = [];
  for (let index = from + 1; index < steps.length; index++) {
    const step = steps[index]!;
    taken.push(step);
    if (step.state.phase === 'idle') break;
  }
  return taken;
}

/** The conversation so far, as the caller keeps it. */
interface Conversation {
  messages: { role: 'user' | 'assistant'; content: unknown }[];
  /** The delivered tool_use ids, by model id, and the ids their upstream wrote. */
  delivered: Map<string, { callerId: string; upstreamId: string }>;
}

function freshConversation(): Conversation {
  return { messages: [{ role: 'user', content: 'Look up "routes".' }], delivered: new Map() };
}

/** Scripts each attempt of the exchange; returns the upstreams the attempts go to, in order. */
function scriptAttempts(
  upstreams: RoutesUpstreams,
  before: RoutesState,
  steps: readonly RoutesStep[],
  mode: RoutesConstants['mode'],
  turn: number,
  rotation: { next: number },
): { targets: Upstream[]; emitted: Map<string, string> } {
  const targets: Upstream[] = [];
  const emitted = new Map<string, string>();
  let state = before;
  for (const step of steps) {
    const attempted = target(state);
    if (step.action === 'AttemptFail' && attempted !== undefined) {
      targets.push(attempted);
      const kind = rotation.next++ % 2 === 0 ? '5xx' : 'reset';
      upstreams.queues[attempted].push(
        step.param.failure === 'upstream'
          ? failureStep(kind, 'tpx', mode)
          : serverStep.json(
              { error: { message: 'bad request', type: 'invalid_request_error', param: null, code: null } },
              { status: 400 },
            ),
      );
    }
    if (step.action === 'FirstByte' && attempted !== undefined) targets.push(attempted);
    if (step.action === 'StreamFail')
      upstreams.queues[targets[targets.length - 1]!].push(failureStep('malformed', 'tpx', 'stream'));
    if (step.action === 'Deliver') {
      const ids = step.param.ids.map((id, n) => {
        const upstreamId = `${providerToolId('tpx', n + 1, turn)}-${targets[targets.length - 1]!}`;
        emitted.set(id, upstreamId);
        return { id: upstreamId, input: { q: id } };
      });
      upstreams.queues[targets[targets.length - 1]!].push(replyStep('tpx', mode, ids, `t${turn}`));
    }
    state = step.state;
  }
  return { targets, emitted };
}

/** The request the caller sends: the conversation, with a tool_result for each pending tool_use. */
function requestOf(conversation: Conversation, pending: readonly string[], kind: 'haiku' | 'other') {
  const results = pending.map((id) => ({
    type: 'tool_result',
    tool_use_id: conversation.delivered.get(id)!.callerId,
    content: `result of ${id}`,
  }));
  const messages = [...conversation.messages];
  if (results.length > 0) messages.push({ role: 'user', content: results });
  else if (messages[messages.length - 1]?.role === 'assistant')
    messages.push({ role: 'user', content: 'Go on.' });
  conversation.messages = messages;
  return {
    model: kind === 'haiku' ? 'claude-haiku-4-5' : 'claude-sonnet-4-5',
    max_tokens: 64,
    tools: [TOOL],
    messages,
  } as Parameters<ModelTransport['send']>[0];
}

/** Makes the call; the message delivered, or the error, and what `onResponse` said. */
async function call(
  transport: ModelTransport,
  request: Parameters<ModelTransport['send']>[0],
  mode: RoutesConstants['mode'],
): Promise<{ message?: Message; events: MessageStreamEvent[]; error?: unknown; info?: ResponseInfo }> {
  let info: ResponseInfo | undefined;
  const options = { onResponse: (response: ResponseInfo) => (info = response) };
  const events: MessageStreamEvent[] = [];
  try {
    if (mode === 'send')
      return { message: await transport.send(request, options), events, ...(info ? { info } : {}) };
    for await (const event of transport.stream(request, options)) events.push(event);
    return { events, ...(info ? { info } : {}) };
  } catch (error) {
    return { events, error, ...(info ? { info } : {}) };
  }
}

/** The tool_use blocks a message or a stream delivered, in order. */
function toolUses(result: {
  message?: Message;
  events: MessageStreamEvent[];
}): { id: string; input: unknown }[] {
  if (result.message !== undefined) {
    return result.message.content.filter((block) => block.type === 'tool_use') as {
      id: string;
      input: unknown;
    }[];
  }
  return result.events
    .filter((event) => event.type === 'content_block_start' && event.content_block.type === 'tool_use')
    .map((event) => (event as { content_block: { id: string; input: unknown } }).content_block);
}

/** Replays one behaviour; throws a `Divergence` naming the first difference. */
export async function replayRoutesBehaviour(
  constants: RoutesConstants,
  upstreams: RoutesUpstreams,
  steps: readonly RoutesStep[],
): Promise<void> {
  const clock = { now: 1_000_000 };
  const transport = transportFor(constants, upstreams, clock);
  const rotation = { next: 0 };
  let conversation = freshConversation();
  try {
    for (let index = 1; index < steps.length; index++) {
      const step = steps[index]!;
      const before = steps[index - 1]!.state;
      if (step.action === 'CoolDown') {
        clock.now += COOL_DOWN_MS;
        continue;
      }
      if (step.action !== 'CallerSend' && step.action !== 'NoTarget') continue;
      const rest = exchangeSteps(steps, index);
      const turn = step.state.turn + 1;
      const { targets, emitted } = scriptAttempts(
        upstreams,
        step.state,
        rest,
        constants.mode,
        turn,
        rotation,
      );
      const arrivedBefore = upstreams.arrivals.length;
      const request = requestOf(conversation, before.pending, step.param.kind);
      const result = await call(transport, request, constants.mode);
      const after = rest.length > 0 ? rest[rest.length - 1]!.state : step.state;
      const where = `turn ${turn} (${step.param.kind}, steps ${[step, ...rest].map((s) => s.action).join(' ')})`;
      const arrived = upstreams.arrivals.slice(arrivedBefore);
      expectEqual(
        `${where}: upstreams tried`,
        arrived.map((arrival) => arrival.upstream),
        targets,
      );
      checkWireIds(arrived[0]?.json, before, conversation, where);
      conversation = checkOutcome(result, after, targets, emitted, conversation, step.param.kind, where);
      const states = Object.fromEntries(
        (transport.upstreamStates?.() ?? []).map((state) => [
          state.name,
          [state.state, state.consecutiveFailures],
        ]),
      );
      const expected = Object.fromEntries(
        (['u1', 'u2'] as const).map((name) => [
          name,
          [after.breakers[name].state, after.breakers[name].count],
        ]),
      );
      expectEqual(`${where}: breakers`, states, expected);
      index += rest.length;
    }
  } finally {
    await transport.close();
  }
}

/** `PairingAcrossUpstreams`: the first attempt carries the ids the emitting upstream wrote. */
function checkWireIds(body: unknown, before: RoutesState, conversation: Conversation, where: string): void {
  if (body === undefined) return;
  const messages = (body as { messages?: { role: string; tool_call_id?: string }[] }).messages ?? [];
  const last = messages.map((message) => message.role).lastIndexOf('assistant');
  const sent = messages
    .slice(last + 1)
    .filter((message) => message.role === 'tool')
    .map((message) => message.tool_call_id);
  const expected = before.pending.map((id) => conversation.delivered.get(id)!.upstreamId);
  expectEqual(`${where}: tool_call_id on the wire`, [...sent].sort(), [...expected].sort());
}

/** Compares the outcome with the model's; returns the conversation as the caller continues it. */
function checkOutcome(
  result: Awaited<ReturnType<typeof call>>,
  after: RoutesState,
  targets: readonly Upstream[],
  emitted: ReadonlyMap<string, string>,
  conversation: Conversation,
  kind: 'haiku' | 'other',
  where: string,
): Conversation {
  if (after.lastOutcome === 'err') {
    if (!isTransportError(result.error))
      throw new Divergence(`${where}: expected a TransportError, got ${describe(result.error)}`);
    return freshConversation();
  }
  if (result.error !== undefined)
    throw new Divergence(`${where}: unexpected error ${describe(result.error)}`);
  const answered = targets[targets.length - 1]!;
  expectEqual(`${where}: onResponse upstream`, result.info?.upstream, answered);
  expectEqual(`${where}: the route's model`, result.info?.upstreamModel, MODELS[answered]);
  expectEqual(`${where}: answered by a target of Route(kind)`, Route(kind).includes(answered), true);
  const uses = toolUses(result);
  expectEqual(`${where}: tool_use count`, uses.length, after.pending.length);
  const delivered = new Map<string, { callerId: string; upstreamId: string }>();
  uses.forEach((use, position) => {
    const id = after.pending[position]!;
    delivered.set(id, { callerId: use.id, upstreamId: emitted.get(id)! });
  });
  if (new Set(uses.map((use) => use.id)).size !== uses.length)
    throw new Divergence(`${where}: duplicate tool_use ids`);
  const content = result.message?.content ?? [
    { type: 'text', text: 'Let me look that up.' },
    ...uses.map((use) => ({ type: 'tool_use', id: use.id, name: TOOL.name, input: use.input })),
  ];
  return { messages: [...conversation.messages, { role: 'assistant', content }], delivered };
}

/** Starts the two upstreams: each answers from its queue (an empty queue is a divergence: 418). */
export async function startRoutesUpstreams(): Promise<RoutesUpstreams & { close(): Promise<void> }> {
  const queues: Record<Upstream, ServerStep[]> = { u1: [], u2: [] };
  const arrivals: { upstream: Upstream; json: unknown }[] = [];
  const serve = (upstream: Upstream) =>
    startScriptedServer((record) => {
      arrivals.push({ upstream, json: record.json });
      return (
        queues[upstream].shift() ??
        serverStep.json({ error: { message: `no answer scripted for ${upstream}` } }, { status: 418 })
      );
    });
  const [u1, u2] = await Promise.all([serve('u1'), serve('u2')]);
  return {
    servers: { u1, u2 },
    queues,
    arrivals,
    async close() {
      await Promise.all([u1.close(), u2.close()]);
    },
  };
}
