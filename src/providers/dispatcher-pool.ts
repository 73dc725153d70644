/**
 * The connection pools requests go through: undici agents, one per connect deadline, routed through an
 * outbound proxy when the environment names one.
 *
 * @module
 */
import { Agent, EnvHttpProxyAgent, buildConnector, type Dispatcher } from 'undici';
import { skipContinueResponses } from './skip-continue-responses.js';

/**
 * undici's connector, closing the sockets it opens for nothing. When a request is aborted in flight (a
 * cancel, a deadline, a proxy client that went away), undici puts it back in its queue, opens a new
 * connection for it and only then drops it (nodejs/undici#5845). That socket never carries a request,
 * and as it served no response no keep-alive timer ever closes it: one idle connection left open per
 * abort. undici writes a queued request synchronously once its socket connects, so a socket with
 * nothing written right after the connect callback is one of those, and is closed at once. Each socket
 * also skips interim `100 Continue` responses, which undici cannot (see `skip-continue-responses.ts`).
 */
function connectorClosingUnusedSockets(connectTimeoutMs: number): buildConnector.connector {
  // undici reads a timeout of 0 as "none" (and null as its 10 s default).
  const connect = buildConnector({ timeout: connectTimeoutMs });
  return (options, callback) => {
    connect(options, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      skipContinueResponses(socket);
      callback(null, socket);
      if (socket.bytesWritten === 0 && !socket.destroyed) socket.destroy();
    });
  };
}

/** The outbound proxy settings of an environment, as curl and most tools read them (lower case first). */
export function outboundProxySettings(
  env: Record<string, string | undefined>,
): { httpProxy: string; httpsProxy: string; noProxy: string } | undefined {
  const read = (name: string) => (env[name.toLowerCase()] ?? env[name] ?? '').trim();
  const httpProxy = read('HTTP_PROXY');
  const httpsProxy = read('HTTPS_PROXY');
  if (httpProxy === '' && httpsProxy === '') return undefined;
  return { httpProxy, httpsProxy, noProxy: read('NO_PROXY') };
}

/**
 * One keep-alive pool per connect deadline, so a per-call connect timeout is honoured. When the
 * environment names an outbound proxy (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), undici's
 * `EnvHttpProxyAgent` routes each request by those rules, read from `env` (the transport's snapshot),
 * not from `process.env`.
 */
export function createDispatcherPool(env: Record<string, string | undefined> = {}): {
  get(connectTimeoutMs: number): Dispatcher;
  close(): Promise<void>;
} {
  const agents = new Map<number, Dispatcher>();
  const proxy = outboundProxySettings(env);
  return {
    get(connectTimeoutMs) {
      let agent = agents.get(connectTimeoutMs);
      if (agent === undefined) {
        const agentOptions = {
          connect: connectorClosingUnusedSockets(connectTimeoutMs),
          keepAliveTimeout: 4_000,
          // No cap on connections per origin: a proxy in front of many agents must not queue exchanges
          // behind a fixed pool, where they would wait with their first-byte deadline already running.
          connections: null,
          pipelining: 1,
        };
        agent =
          proxy === undefined
            ? new Agent(agentOptions)
            : new EnvHttpProxyAgent({ ...agentOptions, ...proxy });
        agents.set(connectTimeoutMs, agent);
      }
      return agent;
    },
    async close() {
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((agent) => agent.close()));
    },
  };
}
