/**
 * After the whole run: which real-editor tests were skipped because their editor is not installed
 * here, and the command that installs each (CI installs them all and runs every test).
 */
import { available, EDITORS, missingLine } from './helpers/editors.js';

export default function setup(): () => void {
  return () => {
    const missing = Object.values(EDITORS).filter((editor) => !available(editor));
    if (missing.length === 0) return;
    process.stdout.write(`\nReal-editor tests skipped, their editor is not installed here:\n${missing.map((editor) => `  - ${missingLine(editor)}`).join('\n')}\n`);
  };
}
