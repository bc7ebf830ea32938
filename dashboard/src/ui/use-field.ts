/**
 * `useField`, the state of one text field in the shape TextField and SelectField take it: `{ value, onValue }`
 * to spread on the field, and a setter for the page (to write a saved value back). With `trim`, white space
 * around what is typed is dropped as it is typed (an address, an amount, a cap), as the API would refuse it.
 * Checking the value stays with the page.
 */
import { useState } from 'preact/hooks';

export interface FieldState<T extends string = string> {
  value: T;
  onValue: (value: T) => void;
}

/** `T` is string unless named (`useField<'pay' | 'transfer'>('pay')`): a field holds what is typed. */
export function useField<T extends string = string>(
  initial: NoInfer<T>,
  { trim = false }: { trim?: boolean } = {},
): [FieldState<T>, (value: T) => void] {
  const [value, setValue] = useState<T>(initial);
  const onValue = (typed: T) => setValue(trim ? (typed.trim() as T) : typed);
  return [{ value, onValue }, setValue];
}
