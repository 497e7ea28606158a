import type { ServerResponse } from 'node:http';
import { finished, Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { platformPlugin } from './platform-app.js';

/**
 * Long answers: the work behind a streamed answer, and the time an answer may take to be sent.
 *
 * - The work of an answer lasts until its response has closed and, for a streamed answer (an
 *   export), until its stream has closed too: a stream keeps reading rows for a step after the
 *   response ends (client gone, cut), and a budget place or a time bound given back at the
 *   response's end would let that work run unbudgeted (`whenAnswerWorkEnds`).
 * - An answer without a body (HEAD, 204, 304) never reads its stream: the stream is destroyed before
 *   it reads anything and the headers go out alone, the same as the GET's. (Fastify answers HEAD
 *   with the GET's handler and reads a stream to its end, the client long gone.)
 * - Every answer is sent within a bound, counted from when it starts to be sent: ANSWER_SEND_MAX_MS,
 *   or the route's own (`cutAnswerAfter`, an export's EXPORT_MAX_SECONDS), so that a client that reads
 *   a trickle cannot hold a budget place, a connection and the answer's memory for ever.
 *
 * Cutting an answer destroys the connection: a chunked answer then ends without its terminating
 * zero-length chunk (and a sized one short of its Content-Length), so the client sees the answer is
 * incomplete; a clean end would pass a cut file off as whole.
 */

/**
 * The time an answer has to be sent, from its first byte, unless its route gives its own: long
 * enough for the largest answers besides an export (Swagger UI's bundle, a page of 1000 rows in
 * GeoJSON) at the pace of a slow mobile client (docs/reliability.md, "Long answers").
 */
export const ANSWER_SEND_MAX_MS = 60_000;

/** The stream each response sends, while its answer is sent (and its work may go on). */
const answerStreams = new WeakMap<ServerResponse, Readable>();
/** The responses whose answer has its time bound already (cutAnswerAfter). */
const boundedAnswers = new WeakSet<ServerResponse>();

function isNodeStream(payload: unknown): payload is Readable {
  return typeof payload === 'object' && payload !== null && typeof (payload as Readable).pipe === 'function' && typeof (payload as Readable).destroy === 'function';
}

/** Whether an answer of this request and status has a body (RFC 9110: not HEAD, 1xx, 204, 304). */
function hasBody(request: FastifyRequest, statusCode: number): boolean {
  return request.method !== 'HEAD' && statusCode >= 200 && statusCode !== 204 && statusCode !== 304;
}

/**
 * Calls `ended` once the answer's work is over: its response has closed and, when it sent a stream,
 * that stream has closed too (a stream still open when the response closes, which Fastify destroys
 * when it pipes it, is destroyed here in any case: nobody will read it).
 */
export function whenAnswerWorkEnds(response: ServerResponse, ended: () => void): void {
  const afterResponse = (): void => {
    const stream = answerStreams.get(response);
    if (stream === undefined || stream.closed) {
      ended();
      return;
    }
    if (!stream.destroyed) stream.destroy();
    finished(stream, { readable: true, writable: false }, () => ended());
  };
  if (response.closed) afterResponse();
  else response.once('close', afterResponse);
}

/** Cuts this reply's answer (and its stream's work) `maxMs` after now, unless its work has ended by then. */
export function cutAnswerAfter(reply: FastifyReply, maxMs: number): void {
  const response = reply.raw;
  boundedAnswers.add(response);
  const timer = setTimeout(() => {
    reply.log.warn({ max_seconds: maxMs / 1_000 }, 'answer cut: still running at its time bound');
    if (!response.writableFinished) response.destroy();
    answerStreams.get(response)?.destroy();
  }, maxMs);
  timer.unref();
  whenAnswerWorkEnds(response, () => clearTimeout(timer));
}

/**
 * onSend, before the answer is compressed or written: follows a streamed answer (its work ends with
 * its stream), sends only the headers of an answer without a body (its stream destroyed unread), and
 * bounds the sending of every answer whose route did not.
 */
export function makeAnswerSending(sendMaxMs: number) {
  return function followAnswer(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void): void {
    const response = reply.raw;
    if (!boundedAnswers.has(response)) cutAnswerAfter(reply, sendMaxMs);
    if (!isNodeStream(payload)) {
      done(null, payload);
      return;
    }
    answerStreams.set(response, payload);
    if (hasBody(request, reply.statusCode)) {
      done(null, payload);
      return;
    }
    payload.destroy();
    // An empty stream in its place: the answer keeps the headers of a streamed one (no Content-Length).
    done(null, Readable.from([]));
  };
}

/** Streamed answers, answers without a body and the send bound of every answer (see above). */
export const longAnswersPlugin = platformPlugin<{ sendMaxMs: number }>('long-answers', (app, { sendMaxMs }) => {
  app.addHook('onSend', makeAnswerSending(sendMaxMs));
});

/** Cuts every connection still open on the app's server (answers in progress included). */
export function cutOpenConnections(app: FastifyInstance): void {
  app.log.warn('shutdown grace over: cutting the connections still open');
  app.server.closeAllConnections();
}
