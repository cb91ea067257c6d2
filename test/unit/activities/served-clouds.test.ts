import { describe, expect, it } from 'vitest';
import { servedClouds, withServedClouds } from '../../../src/activities/served-clouds';

describe('servedClouds', () => {
  it('survives an object spread (tests and the bench override single activities) and stays out of the activity list', () => {
    const acts = withServedClouds({ createInstance: async () => 1 }, ['aws', 'local']);
    const overridden = { ...acts, awaitRunning: async () => 2 };
    expect(servedClouds(acts)).toEqual(['aws', 'local']);
    expect(servedClouds(overridden)).toEqual(['aws', 'local']);
    expect(Object.keys(overridden)).toEqual(['createInstance', 'awaitRunning']);
    expect(Object.entries(overridden).map(([k]) => k)).toEqual(['createInstance', 'awaitRunning']);
  });

  it('is undefined for activities createActivities did not make', () => {
    expect(servedClouds({})).toBeUndefined();
  });
});
