import { randomBytes } from 'node:crypto';
import { open, stat, unlink } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { RATE_EXPECTED, parseRate } from '../rates.js';
import { SERVICE_NAMES, emptyKeyFile, instantOf, readKeyFile, writeKeyFile, type KeyFileContent, type KeyFileEntry } from './key-file.js';
import { keyDigest, newKeyText } from './key-text.js';

/**
 * `npm run keys -- <command>`: the key file's keys, made, listed, revoked and rotated
 * (docs/deploy.md, "Keys per client"). A new key is printed once, alone on stdout (what a script
 * captures); what was done goes to stderr. Only the key's SHA-256 is written. The file is written
 * whole (a temporary file renamed over it), under a lock file beside it, so that two commands at once
 * never lose each other's change; the services read it again within 2 s.
 */
export const USAGE = `Usage: npm run keys -- <command> [--file PATH]

  create --name NAME [--services tickets,houses,requests] [--rate N/minute] [--expires YYYY-MM-DD]
                  a new key (every service, no limit of its own and no expiry unless given), printed once
  list            the keys: id, name, services, limit, expiry, state (never a key)
  revoke ID       the key is refused by every service from its next request
  rotate ID [--old-expires YYYY-MM-DD | now]
                  a new key with the same name, services, limit and expiry, printed once; the old one
                  keeps working until --old-expires (default: 24 hours from now), then is refused

  --file PATH     the key file (default: API_KEYS_FILE); create makes it when missing
  --help
`;

/** The old key of a rotation works this long beside the new one unless --old-expires says otherwise. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** How long a command waits for another one's lock, and when a lock is taken as left by a crash. */
const LOCK_WAIT_MS = 5_000;
const LOCK_STALE_MS = 30_000;

/** A refusal of the command: its message on stderr, exit code 1 (2 for a usage error). */
class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** The clock (tests move it). */
  now?: () => number;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

function keyFilePath(option: string | undefined, env: CommandIo['env']): string {
  const path = option ?? env.API_KEYS_FILE;
  if (path === undefined || path.trim() === '') throw new CommandError('no key file: give --file PATH or set API_KEYS_FILE', 2);
  return isAbsolute(path) ? path : resolve(process.cwd(), path);
}

function readServices(values: string[] | undefined): KeyFileEntry['services'] {
  if (values === undefined) return [...SERVICE_NAMES];
  const names = values.flatMap((value) => value.split(',')).map((name) => name.trim().toLowerCase());
  const services: KeyFileEntry['services'] = [];
  for (const name of names) {
    const service = SERVICE_NAMES.find((known) => known === name);
    if (service === undefined) throw new CommandError(`--services: ${JSON.stringify(name)} is not one of ${SERVICE_NAMES.join(', ')}`, 2);
    if (!services.includes(service)) services.push(service);
  }
  if (services.length === 0) throw new CommandError(`--services: give one or more of ${SERVICE_NAMES.join(', ')}`, 2);
  return services;
}

function readRate(value: string | undefined): string | null {
  if (value === undefined) return null;
  const rate = parseRate(value);
  if (rate === null) throw new CommandError(`--rate: ${JSON.stringify(value)} is not ${RATE_EXPECTED}`, 2);
  return rate.text;
}

/** A date after today: the key is refused from the start of that day (UTC). */
function readExpiry(option: string, value: string | undefined, now: number): string | null {
  if (value === undefined) return null;
  const instant = DATE_ONLY.test(value) ? instantOf(value) : Number.NaN;
  if (Number.isNaN(instant)) throw new CommandError(`${option}: ${JSON.stringify(value)} is not a date YYYY-MM-DD`, 2);
  if (instant <= now) throw new CommandError(`${option}: ${value} has begun or passed; the key would be refused at once`, 2);
  return new Date(instant).toISOString();
}

function newId(content: KeyFileContent): string {
  for (;;) {
    const id = `key_${randomBytes(6).toString('hex')}`;
    if (!content.keys.some((entry) => entry.id === id)) return id;
  }
}

function entryOf(content: KeyFileContent, id: string): KeyFileEntry {
  const entry = content.keys.find((key) => key.id === id);
  if (entry === undefined) throw new CommandError(`no key has the id ${JSON.stringify(id)} (npm run keys -- list shows them)`);
  return entry;
}

/** Runs `change` on the file under its lock, and writes what it returns. */
async function changeFile<T>(path: string, createWhenMissing: boolean, change: (content: KeyFileContent) => T): Promise<T> {
  const lock = `${path}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await (await open(lock, 'wx')).close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new CommandError(`cannot lock the key file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      const age = await stat(lock).then((state) => Date.now() - state.mtimeMs, () => 0);
      if (age > LOCK_STALE_MS) await unlink(lock).catch(() => undefined);
      else if (Date.now() > deadline) throw new CommandError(`${lock} is held by another keys command; try again (or remove it if none runs)`);
      else await new Promise((wait) => setTimeout(wait, 50));
    }
  }
  try {
    let content: KeyFileContent;
    try {
      content = (await readKeyFile(path)).content;
    } catch (error) {
      const missing = await stat(path).then(() => false, () => true);
      if (!(createWhenMissing && missing)) throw new CommandError(`the key file ${path}: ${(error as Error).message}`);
      content = emptyKeyFile();
    }
    const result = change(content);
    await writeKeyFile(path, content);
    return result;
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

function describeExpiry(expiresAt: string | null | undefined): string {
  return expiresAt == null ? 'no expiry' : `refused from ${expiresAt}`;
}

async function create(path: string, values: Record<string, unknown>, io: CommandIo, now: number): Promise<void> {
  const name = typeof values.name === 'string' ? values.name.trim() : '';
  if (name === '') throw new CommandError('create: give the client a name with --name NAME', 2);
  const services = readServices(values.services as string[] | undefined);
  const rate = readRate(values.rate as string | undefined);
  const expiresAt = readExpiry('--expires', values.expires as string | undefined, now);
  const key = newKeyText();
  const id = await changeFile(path, true, (content) => {
    const entry: KeyFileEntry = {
      id: newId(content),
      name,
      sha256: keyDigest(key),
      services,
      rate_limit: rate,
      expires_at: expiresAt,
      disabled: false,
      created_at: new Date(now).toISOString(),
    };
    content.keys.push(entry);
    return entry.id;
  });
  io.stdout(`${key}\n`);
  io.stderr(
    `Created ${id} (${JSON.stringify(name)}) for ${services.join(', ')}; limit ${rate ?? 'RATE_LIMIT'}; ${describeExpiry(expiresAt)}.\n` +
      `The key above is shown this once: give it to the client now. ${path} keeps only its SHA-256.\n`,
  );
}

function stateOf(entry: KeyFileEntry, now: number): string {
  if (entry.disabled === true) return 'revoked';
  if (entry.expires_at != null && now >= instantOf(entry.expires_at)) return 'expired';
  return 'active';
}

async function list(path: string, io: CommandIo, now: number): Promise<void> {
  let content: KeyFileContent;
  try {
    content = (await readKeyFile(path)).content;
  } catch (error) {
    throw new CommandError(`the key file ${path}: ${(error as Error).message}`);
  }
  const header = ['id', 'name', 'services', 'limit', 'expires', 'state', 'created'];
  const rows = [
    header,
    ...content.keys.map((entry) => [
      entry.id,
      entry.name,
      entry.services.join(','),
      entry.rate_limit ?? '-',
      entry.expires_at ?? '-',
      stateOf(entry, now),
      entry.created_at ?? '-',
    ]),
  ];
  const widths = header.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0)));
  for (const row of rows) io.stdout(`${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd()}\n`);
}

async function revoke(path: string, id: string, io: CommandIo): Promise<void> {
  const already = await changeFile(path, false, (content) => {
    const entry = entryOf(content, id);
    const was = entry.disabled === true;
    entry.disabled = true;
    return was;
  });
  io.stderr(already ? `${id} was already revoked.\n` : `Revoked ${id}: every service reading ${path} refuses it within 2 s.\n`);
}

async function rotate(path: string, id: string, values: Record<string, unknown>, io: CommandIo, now: number): Promise<void> {
  const option = values['old-expires'] as string | undefined;
  const oldUntil = option === undefined ? now + ROTATION_OVERLAP_MS : option.toLowerCase() === 'now' ? now : instantOf(readExpiry('--old-expires', option, now) ?? '');
  const key = newKeyText();
  const { newId: created, oldExpiry } = await changeFile(path, false, (content) => {
    const old = entryOf(content, id);
    if (old.disabled === true) throw new CommandError(`${id} is revoked: make a new key with create instead`);
    const entry: KeyFileEntry = {
      id: newId(content),
      name: old.name,
      sha256: keyDigest(key),
      services: [...old.services],
      rate_limit: old.rate_limit ?? null,
      expires_at: old.expires_at ?? null,
      disabled: false,
      created_at: new Date(now).toISOString(),
      rotated_from: old.id,
    };
    const current = old.expires_at == null ? Number.POSITIVE_INFINITY : instantOf(old.expires_at);
    old.expires_at = new Date(Math.min(current, oldUntil)).toISOString();
    content.keys.push(entry);
    return { newId: entry.id, oldExpiry: old.expires_at };
  });
  io.stdout(`${key}\n`);
  io.stderr(
    `Created ${created}, which replaces ${id}: ${id} is ${describeExpiry(oldExpiry)}.\n` +
      `The key above is shown this once: give it to the client now. ${path} keeps only its SHA-256.\n`,
  );
}

/** Runs the command; the exit code. */
export async function runKeysCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: {
        file: { type: 'string' },
        name: { type: 'string' },
        services: { type: 'string', multiple: true },
        rate: { type: 'string' },
        expires: { type: 'string' },
        'old-expires': { type: 'string' },
        help: { type: 'boolean' },
      },
      allowPositionals: true,
      strict: true,
    });
    if (values.help === true) {
      io.stdout(USAGE);
      return 0;
    }
    const [command, id, ...rest] = positionals;
    const now = (io.now ?? Date.now)();
    if (rest.length > 0) throw new CommandError(USAGE, 2);
    if ((command === 'create' || command === 'list') && id === undefined) {
      const path = keyFilePath(values.file, io.env);
      await (command === 'create' ? create(path, values, io, now) : list(path, io, now));
      return 0;
    }
    if ((command === 'revoke' || command === 'rotate') && id !== undefined) {
      const path = keyFilePath(values.file, io.env);
      await (command === 'revoke' ? revoke(path, id, io) : rotate(path, id, values, io, now));
      return 0;
    }
    throw new CommandError(USAGE, 2);
  } catch (error) {
    const usage = (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS') === true;
    const exitCode = error instanceof CommandError ? error.exitCode : usage ? 2 : 1;
    io.stderr(error instanceof CommandError && error.message === USAGE ? USAGE : `keys: ${(error as Error).message}\n`);
    return exitCode;
  }
}
