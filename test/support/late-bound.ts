/**
 * A handle, made while mocha collects a suite, on a value its hooks make later (a server started in
 * `before`/`beforeEach`): reads and writes go through to the value current when they run, so a suite can
 * name it with a `const` instead of a `let` assigned in each hook. What it defends: touching the value before
 * the hook has made it throws, with `what` in the message, instead of reading undefined; `instanceof` sees
 * the value's class. What it does not: private `#fields` of a class (a method called through the handle runs
 * with the handle as `this`).
 */
export function lateBound<T extends object>(current: () => T | undefined, what: string): T {
  const value = (): T => {
    const v = current();
    if (v === undefined) throw new Error(`${what} is not there yet: use it inside hooks and tests`);
    return v;
  };
  return new Proxy({} as T, {
    get: (_target, property) => Reflect.get(value(), property),
    set: (_target, property, v) => Reflect.set(value(), property, v),
    has: (_target, property) => Reflect.has(value(), property),
    getPrototypeOf: () => Reflect.getPrototypeOf(value()),
  });
}

/**
 * A value of the enclosing mocha suite made by `start` in a `before` hook and stopped in an `after` hook,
 * both registered here, so the suite's own `before` hooks (registered after this call) run once it is there;
 * the handle reads through to it (lateBound).
 */
export function useInSuite<T extends { stop(): Promise<unknown> }>(what: string, start: () => Promise<T>): T {
  let started: T | undefined;
  before(async () => {
    started = await start();
  });
  after(async () => {
    await started?.stop();
  });
  return lateBound(() => started, what);
}
