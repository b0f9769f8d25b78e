/**
 * Answers the editor cannot show whole, and places it cannot write: hover carries the start of a
 * long answer and where the rest is, and answers while one of 20 MB streams; the log line is
 * bounded; "answer opened" is said only when a document was opened, and an answer directory that
 * cannot be written is named once, with the setting that fixes it. Over real stdio, with the
 * embedded coordinator and our scripted agent's BIG.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { CLIENT_PAYLOADS } from '../helpers/paths.js';

const start = startingClients();
const root = mkdtempSync(join(tmpdir(), 'buckley-answers-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const file = join(root, 'code.ts');
const code = 'export const answer = 42;\nexport function twice(n: number) {\n  return n * 2;\n}\n';
writeFileSync(file, code);
const neovim = JSON.parse(readFileSync(`${CLIENT_PAYLOADS}neovim-0.10.4.json`, 'utf8'));
const workspace = { rootUri: pathToFileURL(root).href, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }] };
const range = { start: { line: 1, character: 0 }, end: { line: 3, character: 1 } };
/** The ask's context: the selection of `twice`. */
const about = (uri: string) => ({ activeFile: uri, selection: range });

async function editor(settings?: object): Promise<{ client: TestClient; uri: string }> {
  const client = await start({ client: 'neovim-0.10.4', initialize: { ...workspace, capabilities: neovim.capabilities }, ...(settings ? { settings } : {}) });
  const uri = await client.open(file, code, 'typescript');
  return { client, uri };
}

const hover = (client: TestClient, uri: string) => client.request('textDocument/hover', { textDocument: { uri }, position: { line: 2, character: 4 } });

describe('a long answer', () => {
  it('hover holds its start and where the rest is; the log line is bounded; the document holds all of it', async () => {
    const { client, uri } = await editor();
    const { answer } = await client.request('buckley/ask', { question: 'BIG 2', context: about(uri) });
    // The result carries its first megabyte (one message never holds up the editor's other replies), and where the rest is.
    const more = /\n\n… ([\d,]+) more characters: the whole answer is in its answer document \(buckley\.answers\.directory\)$/.exec(answer);
    expect(more).not.toBeNull();
    expect(answer.length).toBeLessThan(1024 * 1024 + 200);
    const total = answer.length - more![0].length + Number(more![1]!.replaceAll(',', ''));
    expect(total).toBeGreaterThan(2 * 1024 * 1024);
    const shown = await client.waitFor('window/showDocument', (p) => readFileSync(fileURLToPath(p.uri), 'utf8').startsWith('# BIG 2'));
    const document = readFileSync(fileURLToPath(shown.uri), 'utf8');
    expect(document).toContain('The end of the long answer.');
    const { contents } = await hover(client, uri);
    expect(contents.value.length).toBeLessThan(5_000);
    expect(contents.value).toMatch(/^\*\*Buckley\*\* — BIG 2\n\nLine 1 of a long answer/);
    expect(contents.value).toContain(`… the whole answer (${total.toLocaleString('en')} characters) is in [its document](${shown.uri})`);
    const logged = client.all('window/logMessage').find((p) => p.message.startsWith('Buckley\'s answer to "BIG 2"'));
    expect(logged.message.length).toBeLessThan(300 * 1024);
    expect(logged.message).toMatch(/\n… \(\d+ characters left out here; the answer document has them\) …\n/);
    expect(logged.message).toMatch(/The end of the long answer\.$/);
  });

  it('while 20 MB of answer stream in, hover still answers, saying the ask is under way', async () => {
    const { client, uri } = await editor();
    const asked = client.request('buckley/ask', { question: 'BIG 20', context: about(uri), workDoneToken: 'big' });
    await client.waitFor('$/progress', (p) => p.token === 'big' && p.value?.kind === 'report' && /long answer/.test(p.value.message ?? ''));
    const during = await hover(client, uri);
    expect(during.contents.value).toContain('is answering: BIG 20');
    expect((await asked).answer).toMatch(/more characters: the whole answer is in its answer document/);
  });
});

describe('an answer directory that cannot be written', () => {
  it('is named once, with the setting that fixes it; no answer is said to be opened; answers reach the log and hover', async () => {
    const notADirectory = join(root, 'a-file');
    writeFileSync(notADirectory, 'not a directory');
    const { client, uri } = await editor({ answers: { directory: join(notADirectory, 'answers') } });
    for (const question of ['INSTANT', 'INSTANT again']) {
      await client.request('buckley/ask', { question, context: about(uri) });
      const said = await client.waitFor('window/showMessage', (p) => p.message.includes(`«${question}»`));
      expect(said.message).toBe(`answered «${question}»: hover the code`);
    }
    const problems = client.all('window/showMessage').filter((p) => p.message.includes('cannot write answers'));
    expect(problems).toEqual([{ type: 2, message: `cannot write answers to ${join(notADirectory, 'answers')} (it is not a directory): set buckley.answers.directory to a folder you can write; until then each answer is in the log and its message says where else` }]);
    expect(client.all('window/showDocument').filter((p) => !p.uri.endsWith('.diff'))).toEqual([]);
    expect((await hover(client, uri)).contents.value).toContain('ok');
    expect(client.all('window/logMessage').some((p) => p.message.startsWith('Buckley\'s answer to "INSTANT again"'))).toBe(true);
  });
});
