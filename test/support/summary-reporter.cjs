// Mocha's spec reporter plus one plain closing line: "tests: N passed, N failed, N skipped" (in parallel mode
// too: the main process's reporter hears every worker's events). With TREASURY_TEST_SUMMARY_FILE=<file>, the
// counts are appended to that file as one "passed failed skipped" line instead, for ops/test/run-tests.sh to
// add up over its runs and print once.
// With TREASURY_TEST_FILE_TIMES=<file>, it also writes how long each test file took (from its first suite's
// start to its last suite's end, hooks included), slowest first, one "ms<TAB>file" line each: to see where
// a run's time goes (a parallel run adds when each file started, in ms since the epoch, and the worker that
// ran it, to draw the run's schedule, and the CPU in ms that worker and the children it reaped spent on the file,
// which on a busy machine is what the run's wall time follows). In parallel mode the events of a file reach the reporter together when its worker is
// done, so the workers time their own files instead (test/support/root-hooks.ts appends them) and this
// reporter sorts what they wrote; those times include waiting for the cores the other workers use.
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const timesFile = process.env.TREASURY_TEST_FILE_TIMES;
    const files = new Map();
    // A parallel run's workers append to the file: start it empty.
    if (timesFile && runner.constructor.name === 'ParallelBufferedRunner') fs.writeFileSync(timesFile, '');
    if (timesFile) {
      runner.on(EVENT_SUITE_BEGIN, (suite) => {
        if (!suite.file || !suite.parent || !suite.parent.root) return;
        const t = files.get(suite.file) ?? { start: Date.now(), end: Date.now() };
        files.set(suite.file, t);
      });
      runner.on(EVENT_SUITE_END, (suite) => {
        if (!suite.file || !suite.parent || !suite.parent.root) return;
        const t = files.get(suite.file);
        if (t) t.end = Date.now();
      });
    }
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats || {};
      const summaryFile = process.env.TREASURY_TEST_SUMMARY_FILE;
      if (summaryFile) fs.appendFileSync(summaryFile, `${s.passes || 0} ${s.failures || 0} ${s.pending || 0}\n`);
      else
        process.stdout.write(
          `\ntests: ${s.passes || 0} passed, ${s.failures || 0} failed, ${s.pending || 0} skipped\n`,
        );
      if (timesFile && runner.constructor.name === 'ParallelBufferedRunner') {
        const rows = fs.existsSync(timesFile)
          ? fs
              .readFileSync(timesFile, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((l) => l.split('\t'))
          : [];
        rows.sort((a, b) => Number(b[0]) - Number(a[0]));
        fs.writeFileSync(timesFile, rows.map((r) => `${r.join('\t')}\n`).join(''));
      } else if (timesFile) {
        const rows = [...files].map(([file, t]) => [t.end - t.start, path.relative(process.cwd(), file)]);
        rows.sort((a, b) => b[0] - a[0]);
        fs.writeFileSync(timesFile, rows.map(([ms, file]) => `${ms}\t${file}\n`).join(''));
      }
    });
  }
}

module.exports = SummaryReporter;
