import { connect, type Socket } from 'node:net';

/** What came back on a raw socket: the bytes, whether the server closed it, and how long it took. */
export interface RawExchange {
  text: string;
  status: number;
  headers: Record<string, string>;
  body: string;
  closedByServer: boolean;
  ms: number;
  /** Bytes of the request body the client managed to write before the answer came. */
  bodyBytesWritten: number;
}

/**
 * Sends `head` (request line and headers, CRLF-terminated by the caller) and then, optionally, a body
 * in chunks produced by `bodyChunks`, stopping as soon as an answer arrives. Resolves when the server
 * closes the socket, when the text received satisfies `until`, or when `idleMs` passes without data
 * after the first byte of the answer.
 */
export function rawExchange(
  port: number,
  head: string | Buffer,
  options: { bodyChunks?: () => Iterator<Buffer>; timeoutMs?: number; idleMs?: number; until?: (text: string) => boolean } = {},
): Promise<RawExchange> {
  const started = Date.now();
  return new Promise((resolveExchange, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let closedByServer = false;
    let bodyBytesWritten = 0;
    let answered = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(overall);
      clearTimeout(idleTimer);
      socket.destroy();
      const text = Buffer.concat(received).toString('utf8');
      const [headPart = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = headPart.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolveExchange({
        text,
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0),
        headers,
        body: rest.join('\r\n\r\n'),
        closedByServer,
        ms: Date.now() - started,
        bodyBytesWritten,
      });
    };
    const overall = setTimeout(finish, options.timeoutMs ?? 10_000);
    socket.on('data', (chunk) => {
      answered = true;
      received.push(chunk);
      clearTimeout(idleTimer);
      if (options.until?.(Buffer.concat(received).toString('utf8')) === true) finish();
      else idleTimer = setTimeout(finish, options.idleMs ?? 300);
    });
    socket.on('end', () => {
      closedByServer = true;
      finish();
    });
    socket.on('close', () => {
      closedByServer = true;
      finish();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // EPIPE / ECONNRESET: the server closed while we were still writing the body.
      if (error.code === 'EPIPE' || error.code === 'ECONNRESET') {
        closedByServer = true;
        finish();
      } else reject(error);
    });
    const writeRequest = async (): Promise<void> => {
      socket.write(head);
      const chunks = options.bodyChunks?.();
      if (!chunks) return;
      for (let next = chunks.next(); !next.done; next = chunks.next()) {
        if (answered || socket.destroyed) return;
        const ok = socket.write(next.value);
        bodyBytesWritten += next.value.length;
        if (!ok) await new Promise<void>((r) => socket.once('drain', () => r()).once('close', () => r()));
      }
    };
    socket.on('connect', () => {
      writeRequest().catch(reject);
    });
  });
}

/** `count` chunks of `size` bytes of `fill`. */
export function* repeatedChunks(count: number, size: number, fill = 'a'): Iterator<Buffer> {
  const chunk = Buffer.alloc(size, fill);
  for (let i = 0; i < count; i += 1) yield chunk;
}

/** The same, each framed as an HTTP/1.1 chunk of a chunked body, then the final empty chunk. */
export function* chunkedEncoding(count: number, size: number, fill = 'a'): Iterator<Buffer> {
  const payload = Buffer.alloc(size, fill);
  const frame = Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), payload, Buffer.from('\r\n')]);
  for (let i = 0; i < count; i += 1) yield frame;
  yield Buffer.from('0\r\n\r\n');
}

/**
 * A hostile client: opens a connection, writes `count` copies of `request` (a complete request,
 * pipelined) and never reads an answer. Resolves once everything is written or the server stopped
 * taking bytes for `writeWindowMs`; the socket stays open until the caller destroys it.
 */
export function pipelineWithoutReading(port: number, request: string, count: number, writeWindowMs = 2000): Promise<Socket> {
  return new Promise((resolveSocket, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    socket.on('error', () => {});
    socket.once('connect', () => {
      const written = socket.write(request.repeat(count));
      if (written) resolveSocket(socket);
      else {
        const timer = setTimeout(() => resolveSocket(socket), writeWindowMs);
        socket.once('drain', () => {
          clearTimeout(timer);
          resolveSocket(socket);
        });
      }
    });
    socket.once('error', reject);
  });
}
