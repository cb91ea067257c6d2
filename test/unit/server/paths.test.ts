import { describe, expect, it } from 'vitest';
import { cacheDir, configDir, stateDir } from '../../../src/paths';

describe('paths', () => {
  it('derive from HOME by default', () => {
    const env = { HOME: '/h' };
    expect([stateDir(env), cacheDir(env), configDir(env)]).toEqual(['/h/.local/state/gpuprov', '/h/.cache/gpuprov', '/h/.config/gpuprov']);
  });

  it('honour XDG_STATE_HOME for state', () => {
    expect(stateDir({ HOME: '/h', XDG_STATE_HOME: '/xdg' })).toBe('/xdg/gpuprov');
  });

  it('let GPUPROV_* variables override everything', () => {
    const env = { HOME: '/h', XDG_STATE_HOME: '/xdg', GPUPROV_STATE_DIR: '/s', GPUPROV_CACHE_DIR: '/c', GPUPROV_CONFIG_DIR: '/g' };
    expect([stateDir(env), cacheDir(env), configDir(env)]).toEqual(['/s', '/c', '/g']);
  });
});
