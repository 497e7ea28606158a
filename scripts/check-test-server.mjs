// Whether a test server answers: `node scripts/check-test-server.mjs postgres|redis <url>`.
// Exit 0 when it answers (PostgreSQL: a connection and `SELECT 1`; Redis: PING answered PONG),
// otherwise exit 1 with the reason as one line on stdout (for scripts/with-test-servers.sh).
// Settles within about 3 seconds either way.
import net from 'node:net';
import pg from 'pg';

const [kind, url] = process.argv.slice(2);

function fail(reason) {
  process.stdout.write(`${reason.replace(/\s+/g, ' ').trim()}\n`);
  process.exit(1);
}

async function checkPostgres(connectionString) {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => {});
  }
}

function checkRedis(redisUrl) {
  const { hostname, port } = new URL(redisUrl);
  return new Promise((resolvePing, rejectPing) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', port: Number(port || 6379) });
    let answer = '';
    socket.setTimeout(3000, () => socket.destroy(new Error('no answer within 3 s')));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (!answer.includes('\r\n')) return;
      socket.end();
      if (answer.startsWith('+PONG')) resolvePing();
      else rejectPing(new Error(`PING answered ${JSON.stringify(answer.trim())}`));
    });
    socket.on('error', rejectPing);
  });
}

if ((kind !== 'postgres' && kind !== 'redis') || url === undefined) {
  fail('usage: node scripts/check-test-server.mjs postgres|redis <url>');
}
try {
  await (kind === 'postgres' ? checkPostgres(url) : checkRedis(url));
} catch (error) {
  fail(error instanceof Error ? (error.message || error.code || String(error)) : String(error));
}
