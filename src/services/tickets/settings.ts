import { SettingsError, readPlatformSettings, type Env, type PlatformSettings } from '../../platform/settings.js';

export const TICKETS_DEFAULT_PORT = 8001;

export type ClassifierMode = 'available' | 'unavailable';

export interface TicketSettings extends PlatformSettings {
  classifierMode: ClassifierMode;
}

/**
 * CLASSIFIER_MODE: unset (or `available`) means the classifier works; `unavailable` simulates a broken
 * classifier. Any other value is refused at start (the contract does not show other values).
 */
export function readClassifierMode(env: Env): ClassifierMode {
  const raw = env.CLASSIFIER_MODE;
  if (raw === undefined || raw.trim() === '') return 'available';
  const value = raw.trim();
  if (value === 'available' || value === 'unavailable') return value;
  throw new SettingsError('CLASSIFIER_MODE', `"${raw}" must be unavailable, available or unset`);
}

export function readTicketSettings(env: Env): TicketSettings {
  return { ...readPlatformSettings(env, TICKETS_DEFAULT_PORT), classifierMode: readClassifierMode(env) };
}
