/**
 * One variable's entry in docs/configuration.md: its one-line meaning, and the default to show when the
 * schema's own cannot be (a computed default, or one a schema cannot express).
 */

export interface Entry {
  meaning: string;
  /** Shown instead of the schema's default (a computed default, or one a schema cannot express). */
  default?: string;
}

export type Entries = Readonly<Record<string, Entry>>;
