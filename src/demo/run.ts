import { relative } from 'node:path';
import { SettingError, StartupError } from '../errors.ts';
import { stepCommand } from './commands.ts';
import { startDemo, type Demo } from './start.ts';
import { DEMO_KEYS, STEPS } from './steps.ts';
import { runTour } from './tour.ts';

/**
 * `npm run demo [-- --tour] [toolgate flags]`: the demo MCP server with
 * toolgate in front of it enforcing examples/demo/policy.yaml, and the
 * commands that show what the policy does. `--tour` takes those steps itself
 * and prints what each showed; the demo keeps running either way.
 */
const argv = process.argv.slice(2);
const tour = argv.includes('--tour');

let demo: Demo;
try {
  demo = await startDemo(
    argv.filter((a) => a !== '--tour'),
    process.env,
  );
} catch (err) {
  if (!(err instanceof SettingError || err instanceof StartupError)) throw err;
  process.stderr.write(`toolgate demo: ${err.message}\n`);
  process.exit(2);
}

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const keys = Object.entries(DEMO_KEYS).map(
  ([who, k]) => `  ${who.padEnd(6)} key ${k.key}  scopes: ${k.scopes.join(', ') || 'none'}`,
);
out(`
toolgate is running in front of the demo MCP server, enforcing ${relative(process.cwd(), demo.policy)}.

  MCP endpoint   ${demo.mcp}   (2026-07-28 requests need no session; 2025 clients work too)
  admin          ${demo.admin}/healthz  ${demo.admin}/readyz  ${demo.admin}/metrics

Principals (static agent keys, sent as Authorization: Bearer <key>):
${keys.join('\n')}
`);
if (tour) {
  out('The tour: each step against the running demo, with its status and the part worth seeing.\n');
  await runTour(demo, out);
} else {
  for (const [i, step] of STEPS.entries())
    out(`${i + 1}. ${step.title}\n   shows: ${step.promise}\n${stepCommand(step, demo)}\n`);
  out('npm run demo -- --tour takes these steps for you.');
}
out(`\nOr point any MCP client (e.g. npx @modelcontextprotocol/inspector) at ${demo.mcp}. Ctrl-C stops both.`);

await new Promise<void>((resolve) => {
  process.once('SIGINT', resolve);
  process.once('SIGTERM', resolve);
});
await demo.close();
