import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import type { HouseModel } from './house-model.js';

/** The model the service trusts: where its file is and the SHA-256 its raw bytes must have. */
export interface ModelSource {
  /** Absolute path of the model file. */
  path: string;
  /** Lowercase hex SHA-256 of the file's bytes. */
  sha256: string;
}

/**
 * Model integrity (house-prices.md, "States and transitions"): the model file is read once, at start;
 * the SHA-256 of its raw bytes is compared with the configured value BEFORE anything is parsed, so a
 * file that is not the reviewed one is never used. The outcome is fixed for the life of the process.
 */
export type ModelState =
  | { status: 'loaded'; path: string; sha256: string; model: HouseModel }
  | { status: 'missing'; path: string }
  | { status: 'unreadable'; path: string; reason: string }
  | { status: 'hash_mismatch'; path: string; expected: string; actual: string }
  | { status: 'unparseable'; path: string; reason: string };

export type ModelParser = (bytes: Buffer) => HouseModel;

export function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function loadModelFile(source: ModelSource, parse: ModelParser): ModelState {
  let bytes: Buffer;
  try {
    bytes = readFileSync(source.path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 'missing', path: source.path };
    return { status: 'unreadable', path: source.path, reason: code ?? String(error) };
  }
  const actual = sha256Hex(bytes);
  if (actual !== source.sha256) return { status: 'hash_mismatch', path: source.path, expected: source.sha256, actual };
  try {
    return { status: 'loaded', path: source.path, sha256: actual, model: parse(bytes) };
  } catch (error) {
    return { status: 'unparseable', path: source.path, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** The one log line at start saying which model was loaded, or why none was. */
export function logModelState(log: FastifyBaseLogger, state: ModelState): void {
  switch (state.status) {
    case 'loaded':
      log.info(
        { model_status: state.status, model_version: state.model.version, model_path: state.path, model_sha256: state.sha256 },
        `model ${state.model.version} loaded from ${state.path}`,
      );
      return;
    case 'missing':
      log.error({ model_status: state.status, model_path: state.path }, `no model loaded: model file ${state.path} is missing`);
      return;
    case 'unreadable':
      log.error({ model_status: state.status, model_path: state.path }, `no model loaded: model file ${state.path} cannot be read (${state.reason})`);
      return;
    case 'hash_mismatch':
      log.error(
        { model_status: state.status, model_path: state.path, expected_sha256: state.expected, actual_sha256: state.actual },
        `no model loaded: SHA-256 of ${state.path} differs from the configured value (file refused, not parsed)`,
      );
      return;
    case 'unparseable':
      log.error({ model_status: state.status, model_path: state.path }, `no model loaded: model file ${state.path} cannot be parsed (${state.reason})`);
      return;
  }
}
