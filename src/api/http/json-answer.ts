/**
 * Answers whose JSON text was written already: the pay path serialises a signed payment once, for its row's
 * `response` column, and the same text answers the request (Koa would serialise the object again).
 *
 * Defends: an answer that differs from what was stored — the object is frozen when its text is taken, so
 * nothing changes it afterwards; an object never serialised here is answered as Koa answers any object.
 * Does not defend: nested objects of the answer, which are not frozen (nothing in the pay path changes them);
 * texts are held only while their object lives (a WeakMap), so memory follows the answers in flight.
 */
import type { Context } from 'koa';

const texts = new WeakMap<object, string>();

/** `value`'s JSON text, taken once: later calls with the same object return the same text. Freezes `value`. */
export function jsonTextOnce(value: object): string {
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    Object.freeze(value);
    texts.set(value, text);
  }
  return text;
}

/** Sets `value` as the answer: its JSON text taken before when there is one (same Content-Type as Koa's), else the object. */
export function answerJson(ctx: Context, value: object): void {
  const text = texts.get(value);
  if (text === undefined) {
    ctx.body = value;
    return;
  }
  ctx.type = 'json';
  ctx.body = text;
}
