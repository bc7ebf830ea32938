/** What `npm pack` / `npm publish` of packages/* read (ops/build/stamp-package-metadata.ts): listed here whole. */
import type { Entries } from './entry.js';

export const PACKAGING_ENTRIES: Entries = {
  TREASURY_PACKAGE_REPOSITORY_URL: {
    meaning:
      "the packages' `repository.url` (https or git+https, a public host), used when the root package.json has no `repository`; packing refuses without one (docs/packages.md)",
  },
  TREASURY_PACKAGE_HOMEPAGE: {
    meaning:
      "the packages' `homepage` (https, a public host), used when the root package.json has no `homepage`; packing refuses without one",
  },
};
