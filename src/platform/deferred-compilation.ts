import type { ValidateFunction } from 'ajv';

/**
 * Schema compilation out of the start (the warm-start decision, a warm start under 2 s): ajv's validators and
 * fast-json-stringify's serializers of every route cost about a quarter of a second of CPU for the
 * three services, which a start would otherwise spend before listening. Each route gets a stand-in
 * that compiles its function on its first call; once the service listens, `compilePending` compiles
 * those not called yet, one per turn of the event loop, so that /health (and any request) is answered
 * in between and a route's first request rarely pays its compilation. The functions are the same ones
 * the route would have had: only the moment of compiling changes. A schema that cannot be compiled
 * (none of the services' can: the test suites call every route) fails the request that needs it with
 * a 500, instead of the start.
 */
export class DeferredCompilation {
  private readonly pending: (() => unknown)[] = [];
  private scheduled = false;

  /**
   * Whether a compilePending is announced or running: /ready says not ready meanwhile, since a request
   * would pay its own compilation and each compilation holds the event loop (tens of milliseconds for
   * the largest answers' serializers).
   */
  get compiling(): boolean {
    return this.scheduled;
  }

  /** Announces the compilePending to come (before the service listens: it is not ready until it ends). */
  schedule(): void {
    this.scheduled = true;
  }

  private defer<F>(compile: () => F): () => F {
    let compiled: F | undefined;
    const get = (): F => (compiled ??= compile());
    this.pending.push(get);
    return get;
  }

  /** An ajv validator compiled on its first call (or by compilePending). */
  validator(schema: unknown, compile: () => ValidateFunction): ValidateFunction {
    const get = this.defer(compile);
    const validate = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
      const compiled = get();
      const valid = compiled(data, context);
      validate.errors = compiled.errors;
      return valid;
    }) as ValidateFunction;
    // Fastify gives the parent of the data (for ajv's defaults on the root) to a function with a
    // schemaEnv, as to any ajv function; the compiled one receives it.
    Object.assign(validate, { schemaEnv: {}, schema });
    return validate;
  }

  /** A serializer compiled on its first call (or by compilePending). */
  serializer(compile: () => (data: unknown) => string): (data: unknown) => string {
    const get = this.defer(compile);
    return (data) => get()(data);
  }

  /** Compiles every function not compiled yet, one per turn of the event loop. */
  async compilePending(): Promise<void> {
    this.scheduled = true;
    for (let next = this.pending.shift(); next !== undefined; next = this.pending.shift()) {
      try {
        next();
      } catch {
        // The request that needs it compiles it again and answers 500 (logged there).
      }
      await new Promise((resolveTurn) => setImmediate(resolveTurn));
    }
    this.scheduled = false;
  }
}
