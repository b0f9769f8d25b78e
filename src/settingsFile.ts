/**
 * A settings file: the JSON an editor sends (initializationOptions), or its settings with their
 * `"buckley"` section. `doctor --settings FILE` checks one; `buckley-lsp acp` reads one, since ACP
 * has no settings channel.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readFileBounded, unreadableWhy } from './fileAccess.js';

/** Far more than any settings file: a file past it is not one. */
const SETTINGS_MAX_BYTES = 1024 * 1024;

export function readSettingsFile(path: string): { values: unknown } | { problem: string } {
  let text: string;
  try {
    text = readFileBounded(path, SETTINGS_MAX_BYTES).toString('utf8');
  } catch (error) {
    return { problem: `cannot read the settings file ${path}: ${unreadableWhy(error)}` };
  }
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (error) {
    return { problem: `the settings file ${path} is not JSON: ${(error as Error).message}` };
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) return { problem: `the settings file ${path} must hold a JSON object, the settings` };
  const wrapped = (values as Record<string, unknown>).buckley;
  return { values: wrapped !== undefined && Object.keys(values).length === 1 ? wrapped : values };
}

/** The settings file `buckley-lsp acp` reads when none is named: the user's, where there is one. */
export function defaultSettingsFile(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'buckley-lsp', 'settings.json');
}

/** The settings file named, else the user's where it exists. */
export function acpSettingsFile(named: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return named ?? (existsSync(defaultSettingsFile(env)) ? defaultSettingsFile(env) : undefined);
}
