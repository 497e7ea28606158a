import { isAbsolute, resolve } from 'node:path';
import { SettingsError, readPlatformSettings, type Env, type PlatformSettings } from '../../platform/settings.js';
import { repositoryRoot } from '../../shared/repository-root.js';
import { REVIEWED_MODEL } from './reviewed-model.js';

export const HOUSES_DEFAULT_PORT = 8002;

/** The model the service trusts: where its file is and the SHA-256 its raw bytes must have. */
export interface ModelSource {
  /** Absolute path of the model file. */
  path: string;
  /** Lowercase hex SHA-256 of the file's bytes. */
  sha256: string;
}

export interface HouseSettings extends PlatformSettings {
  model: ModelSource;
}

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;

/**
 * MODEL_PATH and MODEL_SHA256 override the reviewed configuration (reviewed-model.ts).
 * - MODEL_PATH: absolute, or relative to the working directory. Default: the reviewed path,
 *   relative to the repository root.
 * - MODEL_SHA256: 64 hexadecimal digits (any case). Default: the reviewed hash. Setting MODEL_PATH
 *   alone keeps the reviewed hash, so the other file must have the same bytes.
 */
export function readModelSource(env: Env, root: string = repositoryRoot()): ModelSource {
  const rawPath = env.MODEL_PATH?.trim();
  const path = rawPath ? (isAbsolute(rawPath) ? rawPath : resolve(process.cwd(), rawPath)) : resolve(root, REVIEWED_MODEL.path);
  const rawHash = env.MODEL_SHA256?.trim();
  let sha256 = REVIEWED_MODEL.sha256.toLowerCase();
  if (rawHash) {
    if (!SHA256_HEX.test(rawHash)) {
      throw new SettingsError('MODEL_SHA256', `"${env.MODEL_SHA256 ?? ''}" is not a SHA-256 (64 hexadecimal digits)`);
    }
    sha256 = rawHash.toLowerCase();
  }
  return { path, sha256 };
}

export function readHouseSettings(env: Env): HouseSettings {
  return { ...readPlatformSettings(env, HOUSES_DEFAULT_PORT), model: readModelSource(env) };
}
