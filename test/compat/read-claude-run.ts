/**
 * What a Claude Code run showed: from its stream-json events, whether a tool round trip completed and
 * how the turn ended; from `/context`, the token count it reported; from the proxy's exchange log (JSON
 * lines), how many Messages exchanges the session took and whether token counting answered.
 *
 * @module
 */

/** One `tool_use` Claude Code received. */
export interface ToolCall {
  id: string;
  name: string;
}

/** A session (`claude -p "<prompt>"`), as its stream-json output tells it. */
export interface SessionReading {
  /** The `system`/`init` event came: Claude Code started and read its settings. */
  started: boolean;
  /** Every `tool_use` in the assistant events, in order. */
  toolCalls: ToolCall[];
  /** The ids of the `tool_result` blocks Claude Code sent back (user events). */
  toolResultIds: string[];
  /** Some `tool_use` was answered by a `tool_result` with its id, and a later assistant event followed. */
  toolRoundTrip: boolean;
  /** The `result` event, when one came. */
  result:
    { subtype: string; isError: boolean; stopReason: unknown; numTurns: unknown; text: string } | undefined;
}

function contentBlocks(event: Record<string, unknown>): Record<string, unknown>[] {
  const message = event['message'];
  if (typeof message !== 'object' || message === null) return [];
  const content = (message as { content?: unknown }).content;
  return Array.isArray(content) ? (content as Record<string, unknown>[]) : [];
}

/** Reads a session's stream-json events. */
export function readSession(events: readonly Record<string, unknown>[]): SessionReading {
  const toolCalls: ToolCall[] = [];
  const toolResultIds: string[] = [];
  let answeredAfterResult = false;
  for (const event of events) {
    const blocks = contentBlocks(event);
    if (event['type'] === 'assistant') {
      if (toolResultIds.some((id) => toolCalls.some((call) => call.id === id))) answeredAfterResult = true;
      for (const block of blocks) {
        if (block['type'] === 'tool_use')
          toolCalls.push({ id: String(block['id']), name: String(block['name']) });
      }
    }
    if (event['type'] === 'user') {
      for (const block of blocks) {
        if (block['type'] === 'tool_result') toolResultIds.push(String(block['tool_use_id']));
      }
    }
  }
  const result = events.find((event) => event['type'] === 'result');
  return {
    started: events.some((event) => event['type'] === 'system' && event['subtype'] === 'init'),
    toolCalls,
    toolResultIds,
    toolRoundTrip: answeredAfterResult,
    result:
      result === undefined
        ? undefined
        : {
            subtype: String(result['subtype']),
            isError: result['is_error'] === true,
            stopReason: result['stop_reason'],
            numTurns: result['num_turns'],
            text: typeof result['result'] === 'string' ? result['result'] : '',
          },
  };
}

/**
 * The total `/context` reported, in tokens: print mode answers the command locally (no model turn) with
 * a Markdown report whose `**Tokens:** 11.1k / 1m (1%)` line is the count; the same figure comes as
 * `context_usage.total_tokens` on the event that carries the report. `undefined` when neither is there.
 */
export function readContextTokens(events: readonly Record<string, unknown>[]): number | undefined {
  for (const event of events) {
    const usage = event['context_usage'];
    if (typeof usage === 'object' && usage !== null) {
      const total = (usage as { total_tokens?: unknown }).total_tokens;
      if (typeof total === 'number') return total;
    }
  }
  const result = events.find((event) => event['type'] === 'result');
  const text = typeof result?.['result'] === 'string' ? result['result'] : '';
  const match = /\*\*Tokens:\*\*\s*([\d.]+)(k?)\s*\//.exec(text);
  if (match === null) return undefined;
  return Math.round(Number(match[1]) * (match[2] === 'k' ? 1000 : 1));
}

/** One line of the proxy's exchange log that recorded an exchange. */
export interface LoggedExchange {
  path: string;
  status: number;
  error?: string;
  errorMessage?: string;
}

/** The exchanges in a pino log (one JSON object a line; other lines are left out). */
export function readExchangeLog(text: string): LoggedExchange[] {
  const exchanges: LoggedExchange[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (record['msg'] !== 'exchange' || typeof record['path'] !== 'string') continue;
    const exchange: LoggedExchange = { path: record['path'], status: Number(record['status']) };
    if (typeof record['error'] === 'string') exchange.error = record['error'];
    if (typeof record['errorMessage'] === 'string') exchange.errorMessage = record['errorMessage'];
    exchanges.push(exchange);
  }
  return exchanges;
}
