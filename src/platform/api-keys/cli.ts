/**
 * The key file's command, `npm run keys -- <command>` (keys-command.ts says what each does); in the
 * image, `keys <command>` (deploy/container-entry.sh).
 */
import { runKeysCommand } from './keys-command.js';

process.exitCode = await runKeysCommand(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
});
