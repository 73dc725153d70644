/**
 * tpx-transport: one Anthropic Messages interface over two providers — Anthropic natively, or any
 * OpenAI-compatible Chat Completions endpoint, translated both ways.
 *
 * @module
 */
export { createTransport, DEFAULT_DEADLINES } from './transport/create-transport.js';
export { createSession } from './transport/session.js';
export type { Session, SessionOutcome } from './transport/session.js';
export type {
  Deadlines,
  ExchangeOptions,
  MessagesRequestInput,
  ModelTransport,
  ResponseInfo,
  RetryInfo,
  Selection,
  TransportOptions,
  UpstreamInspection,
} from './transport/types.js';
export type { RoutesConfig, RouteMatch } from './transport/routes/routes-config.js';
export type {
  RouteDescription,
  RoutesDescription,
  UpstreamDescription,
  UpstreamState,
} from './transport/routes/describe-routes.js';
export type {
  AttemptEnd,
  AttemptStart,
  ExchangeObserver,
  TokenRefresh,
  TransportObserver,
} from './providers/observer.js';
export { TransportError, isTransportError } from './errors.js';
export type {
  DeadlineName,
  MessagesErrorBody,
  MessagesErrorType,
  ProviderName,
  TransportErrorCode,
} from './errors.js';
export type {
  ContentBlock,
  ContentBlockParam,
  Message,
  MessageParam,
  MessagesRequest,
  MessageStreamEvent,
  StopReason,
  ToolParam,
  Usage,
} from './protocol/messages.js';
export {
  validateMessagesRequest,
  validateMessage,
  validateStreamEvent,
} from './protocol/validate-messages.js';
export { decodeToolId, encodeToolId } from './translate/tool-id-codec.js';
export { ExactNumber } from './protocol/exact-json.js';
