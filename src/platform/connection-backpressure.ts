import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { RequestTurns } from './request-turns.js';

/**
 * Backpressure for pipelined requests (the hostile-input decisions; docs/reliability.md, "Pipelining").
 *
 * Node's HTTP server parses every request of a chunk it reads (up to 64 KiB: a thousand small
 * pipelined requests) and emits them all at once; each answer is then computed and kept in memory
 * until the client reads the answers before it. A client that pipelines and never reads made the
 * service compute and hold every answer. Here, on each connection:
 * - one request at a time is handed to the service; the next one only when the answer before it has
 *   been written to the socket (`finish`) and the socket's buffer is under its high-water mark
 *   (`writableNeedDrain` false), so at most one answer (plus 16 KiB) waits in the process;
 * - while requests wait, the socket is not read (Node's own pause flag, `socket._paused`, which its
 *   HTTP server honours in Node 20, 22 and 24: the parser stops after the current chunk and a request
 *   body being read does not resume the socket), so what waits is bounded by one chunk of requests;
 * - more than `maxWaitingPerConnection` waiting requests on one connection, or more than
 *   `maxWaitingTotal` over all connections, close that connection (a client pipelining that deep is
 *   not reading its answers, or the service is flooded);
 * - a connection with output pending that makes no progress (nothing written to the kernel) for
 *   `stallTimeoutMs` is closed: the client stopped reading.
 * The requests themselves are untouched: answers go out in order, as HTTP/1.1 requires. Over all
 * connections, a turn of the event loop starts at most `turnBudgetMs` of requests (request-turns.ts).
 */
export interface BackpressureLimits {
  maxWaitingPerConnection: number;
  maxWaitingTotal: number;
  stallTimeoutMs: number;
  /** Request work that one turn of the event loop starts before the next requests wait for a later turn. */
  turnBudgetMs: number;
}

export const BACKPRESSURE_LIMITS: BackpressureLimits = {
  maxWaitingPerConnection: 1_000,
  maxWaitingTotal: 10_000,
  stallTimeoutMs: 10_000,
  turnBudgetMs: 5,
};

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** Node's internal pause flag of an HTTP server's socket (lib/_http_server.js). */
interface HttpSocket extends Socket {
  _paused?: boolean;
  parser?: { pause(): void; resume(): void } | null;
}

interface Waiting {
  request: IncomingMessage;
  response: ServerResponse;
  listener: RequestListener;
}

interface ConnectionState {
  socket: HttpSocket;
  waiting: Waiting[];
  /** A request handed to the service whose answer is not written yet. */
  busy: boolean;
  /** Waiting for the socket's 'drain' before the next request. */
  awaitingDrain: boolean;
  /** Bytes handed to the kernel at the last check, and when that number last grew. */
  flushed: number;
  progressAt: number;
}

export class ConnectionBackpressure {
  private readonly connections = new Map<Socket, ConnectionState>();
  private waitingTotal = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly turns: RequestTurns;

  constructor(private readonly limits: BackpressureLimits = BACKPRESSURE_LIMITS) {
    this.turns = new RequestTurns(limits.turnBudgetMs);
  }

  /**
   * Puts the backpressure in front of the server's listeners of requests (Fastify's handler, and
   * the `Expect` events of http-protocol.ts). Call once, after the listeners are added.
   */
  install(server: Server): void {
    for (const event of ['request', 'checkContinue', 'checkExpectation'] as const) {
      for (const listener of server.listeners(event) as RequestListener[]) {
        server.removeListener(event, listener);
        server.on(event, (request: IncomingMessage, response: ServerResponse) => this.admit(request, response, listener));
      }
    }
    server.on('close', () => this.stop());
  }

  /** Runs `listener` for this request now, or once the connection's earlier answers are written. */
  admit(request: IncomingMessage, response: ServerResponse, listener: RequestListener): void {
    const socket = request.socket as HttpSocket;
    const state = this.stateOf(socket);
    if (state.waiting.length >= this.limits.maxWaitingPerConnection || this.waitingTotal >= this.limits.maxWaitingTotal) {
      socket.destroy();
      return;
    }
    state.waiting.push({ request, response, listener });
    this.waitingTotal += 1;
    this.dispatchNext(state, false);
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Connections tracked, and requests waiting over all of them (for tests and benchmarks). */
  stats(): { connections: number; waiting: number } {
    return { connections: this.connections.size, waiting: this.waitingTotal };
  }

  private stateOf(socket: HttpSocket): ConnectionState {
    let state = this.connections.get(socket);
    if (!state) {
      state = { socket, waiting: [], busy: false, awaitingDrain: false, flushed: flushedBytes(socket), progressAt: Date.now() };
      this.connections.set(socket, state);
      const created = state;
      socket.once('close', () => this.forget(created));
      this.sweeper ??= setInterval(() => this.cutStalledConnections(), 1_000).unref();
    }
    return state;
  }

  /** Hands the request to the service in this turn of the event loop, or a later one (RequestTurns). */
  private dispatch(state: ConnectionState, next: Waiting): void {
    this.turns.run(() => {
      // The client may have gone while the request waited for its turn.
      if (state.socket.destroyed) return;
      const done = () => {
        next.response.removeListener('finish', done);
        next.response.removeListener('close', done);
        state.busy = false;
        this.dispatchNext(state, true);
      };
      next.response.on('finish', done);
      next.response.on('close', done);
      next.listener(next.request, next.response);
    });
  }

  /**
   * Hands the connection's next waiting request to the service when nothing of it is in the service
   * and its socket can take more; reads the socket only while no request waits. `afterAnswer`: called
   * when an answer was written, the next request starts in a new turn of the event loop, so that a
   * connection with many quick answers cannot starve the others.
   */
  private dispatchNext(state: ConnectionState, afterAnswer: boolean): void {
    const { socket } = state;
    if (socket.destroyed) return;
    if (state.busy || state.awaitingDrain) {
      // Node's HTTP server resumes reading on every 'drain'; requests still wait here, so not yet.
      if (state.waiting.length > 0) stopReading(socket);
      return;
    }
    if (state.waiting.length === 0) {
      startReading(socket);
      return;
    }
    if (socket.writableNeedDrain) {
      stopReading(socket);
      state.awaitingDrain = true;
      socket.once('drain', () => {
        state.awaitingDrain = false;
        this.dispatchNext(state, true);
      });
      return;
    }
    const next = state.waiting.shift();
    if (next === undefined) return;
    this.waitingTotal -= 1;
    if (state.waiting.length > 0) stopReading(socket);
    else startReading(socket);
    state.busy = true;
    if (!afterAnswer) {
      this.dispatch(state, next);
      return;
    }
    setImmediate(() => this.dispatch(state, next));
  }

  private forget(state: ConnectionState): void {
    this.waitingTotal -= state.waiting.length;
    state.waiting.length = 0;
    this.connections.delete(state.socket);
  }

  /** Closes connections whose pending output has not moved for the stall timeout. */
  private cutStalledConnections(): void {
    const now = Date.now();
    for (const state of this.connections.values()) {
      const { socket } = state;
      const flushed = flushedBytes(socket);
      const pending = socket.writableLength > 0 || state.waiting.length > 0;
      if (!pending || flushed > state.flushed) {
        state.flushed = flushed;
        state.progressAt = now;
      } else if (socket.writableLength > 0 && now - state.progressAt >= this.limits.stallTimeoutMs) {
        socket.destroy();
      }
    }
  }
}

/** Bytes of this socket's output that left the process (handed to the kernel). */
// light-my-request's stand-in socket (inject) has no bytesWritten, though net.Socket's type has it.
function flushedBytes(socket: Pick<Socket, 'writableLength'> & { readonly bytesWritten?: number }): number {
  return (socket.bytesWritten ?? 0) - socket.writableLength;
}

function stopReading(socket: HttpSocket): void {
  if (socket._paused) return;
  socket._paused = true;
  socket.pause();
}

function startReading(socket: HttpSocket): void {
  if (!socket._paused) return;
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}
