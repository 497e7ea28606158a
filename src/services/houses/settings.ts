import { isAbsolute, resolve } from 'node:path';
import { SettingsError, quoted, readText, type Env } from '../../platform/setting-readers.js';
import { readPlatformSettings, type PlatformSettings } from '../../platform/settings.js';
import { repositoryRoot } from '../../shared/repository-root.js';
import { REVIEWED_MODEL, type ModelSource } from './model/index.js';

export const HOUSES_DEFAULT_PORT = 8002;

export interface HouseSettings extends PlatformSettings {
  model: ModelSource;
}

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const SHA256_SHAPE = { expected: 'a SHA-256 (64 hexadecimal digits)' };

/**
 * MODEL_PATH and MODEL_SHA256 override the reviewed configuration (model/reviewed-model.ts).
 * - MODEL_PATH: absolute, or relative to the working directory. Default: the reviewed path,
 *   relative to the repository root.
 * - MODEL_SHA256: 64 hexadecimal digits (any case). Default: the reviewed hash. Setting MODEL_PATH
 *   alone keeps the reviewed hash, so the other file must have the same bytes.
 */
export function readModelSource(env: Env, root: string = repositoryRoot()): ModelSource {
  const rawPath = readText(env, 'MODEL_PATH', { expected: 'the path of a model file' });
  const path = rawPath === undefined ? resolve(root, REVIEWED_MODEL.path) : isAbsolute(rawPath) ? rawPath : resolve(process.cwd(), rawPath);
  const rawHash = readText(env, 'MODEL_SHA256', SHA256_SHAPE);
  if (rawHash !== undefined && !SHA256_HEX.test(rawHash)) {
    throw new SettingsError('MODEL_SHA256', `${quoted(rawHash)} is not ${SHA256_SHAPE.expected}`);
  }
  return { path, sha256: (rawHash ?? REVIEWED_MODEL.sha256).toLowerCase() };
}

export function readHouseSettings(env: Env): HouseSettings {
  return { ...readPlatformSettings(env, HOUSES_DEFAULT_PORT), model: readModelSource(env) };
}
