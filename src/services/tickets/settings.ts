import { readChoice, type Env } from '../../platform/setting-readers.js';
import { readPlatformSettings, type PlatformSettings } from '../../platform/settings.js';

export const TICKETS_DEFAULT_PORT = 8001;

export type ClassifierMode = 'available' | 'unavailable';

export interface TicketSettings extends PlatformSettings {
  classifierMode: ClassifierMode;
}

/**
 * CLASSIFIER_MODE: unset (or `available`) means the classifier works; `unavailable` simulates a broken
 * classifier. Any other value, or an empty one, is refused at start (the contract shows no other value).
 */
export function readClassifierMode(env: Env): ClassifierMode {
  return readChoice<ClassifierMode>(env, 'CLASSIFIER_MODE', ['available', 'unavailable'], 'available');
}

export function readTicketSettings(env: Env): TicketSettings {
  return { ...readPlatformSettings(env, TICKETS_DEFAULT_PORT), classifierMode: readClassifierMode(env) };
}
