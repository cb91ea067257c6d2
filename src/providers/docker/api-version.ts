/** Which Engine API version to speak with an engine (pure). */

/** The Engine API versions the adapter speaks: 1.41 (Docker 20.10) to 1.43 (Docker 24); every field it uses is in 1.41. */
export const OLDEST_API = '1.41';
export const NEWEST_API = '1.43';

/** `major.minor` as comparable numbers; `undefined` for anything else. */
function apiParts(v: string): [number, number] | undefined {
  const m = /^(\d+)\.(\d+)$/.exec(v.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

function apiBelow(a: [number, number], b: [number, number]): boolean {
  return a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
}

/** min(the engine's API version, {@link NEWEST_API}); `undefined` when the engine is below {@link OLDEST_API} or unreadable. */
export function negotiateApiVersion(engineApi: string): string | undefined {
  const engine = apiParts(engineApi);
  if (!engine || apiBelow(engine, apiParts(OLDEST_API)!)) return undefined;
  return apiBelow(engine, apiParts(NEWEST_API)!) ? `${engine[0]}.${engine[1]}` : NEWEST_API;
}
