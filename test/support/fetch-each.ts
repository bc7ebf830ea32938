/**
 * Fetches a list of paths on one server in turn, for the tests that hold every path of a list to the same
 * answer (a page served at each deep link, a 404 for each traversal): each path comes with its response,
 * and the next one is fetched only once the loop's body has checked the previous one.
 * What it defends: the path named in every assertion's message, so a failure says which path answered what.
 * What it does not: check anything itself, or fetch in parallel.
 */
export async function* fetchEach(
  base: string,
  paths: readonly string[],
  init?: RequestInit,
): AsyncGenerator<[path: string, res: Response]> {
  for (const path of paths) yield [path, await fetch(base + path, init)];
}
