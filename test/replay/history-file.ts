/**
 * Saved workflow histories (`test/histories/*.json`): the proto3-JSON form the Temporal CLI's
 * `workflow show -o json` prints and `historyFromJSON` loads, with one event per line. Read,
 * summarised (event and activity types) and written here; writing refuses a history that holds
 * secret material.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodedHistoryText, findSecrets } from '../harness/secrets';

export const HISTORY_DIR = join(__dirname, '..', 'histories');

/** One event as the JSON form spells it: `eventType` plus one `…EventAttributes` object. */
export interface HistoryEvent {
  eventId: string;
  eventType: string;
  [attributes: string]: unknown;
}

export interface HistoryJson {
  events: HistoryEvent[];
}

export const historyFiles = (): string[] =>
  readdirSync(HISTORY_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();

export const readHistory = (file: string): HistoryJson => JSON.parse(readFileSync(join(HISTORY_DIR, file), 'utf8')) as HistoryJson;

/** `EVENT_TYPE_ACTIVITY_TASK_SCHEDULED` → `ActivityTaskScheduled`, as the attribute keys spell it. */
export function shortType(eventType: string): string {
  return eventType
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_m, _s: string, c: string) => c.toUpperCase());
}

export const eventTypes = (h: HistoryJson): string[] => h.events.map((e) => shortType(e.eventType));

/** The attributes object of an event (`{ workflowType, input, … }` of a started event, …). */
export function attributesOf(e: HistoryEvent): Record<string, unknown> {
  const t = shortType(e.eventType);
  const key = `${t[0]!.toLowerCase()}${t.slice(1)}EventAttributes`;
  return (e[key] ?? {}) as Record<string, unknown>;
}

/** Names of the activities the history scheduled, in order. */
export const activityTypes = (h: HistoryJson): string[] =>
  h.events.filter((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED').map((e) => (attributesOf(e).activityType as { name: string }).name);

export const workflowTypeOf = (h: HistoryJson): string => (attributesOf(h.events[0]!).workflowType as { name: string }).name;

export const count = (h: HistoryJson, type: string): number => eventTypes(h).filter((t) => t === type).length;

/** The ids of the patches (`patched()` markers) a history recorded. */
export const patchIds = (h: HistoryJson): string[] =>
  h.events.flatMap((e) => {
    if (shortType(e.eventType) !== 'MarkerRecorded') return [];
    const details = attributesOf(e).details as Record<string, { payloads?: { data?: string }[] }> | undefined;
    const data = details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id] : [];
  });

/** The CLI's JSON re-laid out with one event per line: about half the size, still one diff line per event. */
export function compactHistory(cliJson: string): string {
  const h = JSON.parse(cliJson) as HistoryJson;
  return `{"events": [\n${h.events.map((e) => JSON.stringify(e)).join(',\n')}\n]}\n`;
}

/**
 * Write `test/histories/<file>` after the secret scan (docs/ARCHITECTURE.md, "Secrets never enter a history"): patterns, plus the exact
 * `known` secrets of the recording (e.g. the lines of its SSH private key). Throws, writing
 * nothing, when the history holds any.
 */
export function writeHistory(file: string, cliJson: string, known: string[] = []): void {
  const text = compactHistory(cliJson);
  const found = findSecrets(decodedHistoryText(text), known);
  if (found.length > 0) throw new Error(`${file} not written: the history holds secret material (${found.join(', ')})`);
  writeFileSync(join(HISTORY_DIR, file), text);
}

/** The body lines of an SSH private key, as `known` secrets for {@link writeHistory}. */
export function privateKeyLines(privateKey: string): string[] {
  return privateKey.split('\n').filter((l) => l.length >= 16 && !l.startsWith('-----'));
}
