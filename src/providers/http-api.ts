/**
 * The base of a cloud's HTTP `api.ts`, written once: one {@link JsonHttp} and a guard through
 * which every call leaves with that cloud's `classify` of whatever it threw.
 */
import type { z } from 'zod';
import type { ProviderError } from '../core/errors';
import { guardWith } from './classify-http';
import { HttpError, JsonHttp, type HttpMethod, type JsonHttpOptions } from './http';

export abstract class HttpApi {
  protected readonly http: JsonHttp;
  /** Every call leaves with a ProviderError: this cloud's `classify` of whatever it threw. */
  protected readonly guard: <T>(f: () => Promise<T>) => Promise<T>;

  protected constructor(opts: JsonHttpOptions, classify: (err: unknown) => ProviderError) {
    this.http = new JsonHttp(opts);
    this.guard = guardWith(classify);
  }

  /** One guarded call; its 2xx body parsed by `schema`. */
  protected json<T>(op: string, method: HttpMethod, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    return this.guard(async () => schema.parse(await this.http.call(op, method, path, body)));
  }

  /** One guarded call that ends a resource (a DELETE, a terminate); false when it is already gone (404). */
  protected unlessGone(op: string, method: HttpMethod, path: string, body?: unknown): Promise<boolean> {
    return this.guard(async () => {
      try {
        await this.http.call(op, method, path, body);
        return true;
      } catch (err) {
        if (err instanceof HttpError && err.status === 404) return false;
        throw err;
      }
    });
  }
}
