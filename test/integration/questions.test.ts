/**
 * The agent's questions to the user (ACP elicitation/create, form mode) over stdio, with the
 * scripted agent asking (ASK USER): a choice in the editor's prompt (Neovim 0.10) — one of a
 * list, yes or no, a confirmation — dismissed is declined; where the editor has no prompts
 * (Helix), a code action per answer; a form that needs typing goes to a client that types
 * (`buckley/askText`), and is declined at once, and said, by any other.
 */
import { describe, expect, it } from 'vitest';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';

const start = startingClients();
const env = { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}` };

async function ask(client: TestClient, question: string): Promise<string> {
  return (await client.request('buckley/ask', { question })).answer;
}

describe("the agent's questions", () => {
  it("are asked in the editor's prompt: one of a list, yes or no, a confirmation; dismissed, declined", async () => {
    const choose: Record<string, string | null> = { pick: 'Chocolate', flag: 'No', confirm: 'OK', dismissed: null };
    let next = 'pick';
    const client = await start({ client: 'neovim-0.10.4', env, answerMessageRequest: (params) => params.actions.find((action: any) => action.title === choose[next]) ?? null });
    expect(await ask(client, 'ASK USER pick')).toBe('elicitation: accept {"flavour":"c"}');
    const prompt = client.all('window/showMessageRequest').at(-1);
    expect(prompt.message).toBe('Buckley: Which one? (pick)');
    expect(prompt.actions.map((action: any) => action.title)).toEqual(['Vanilla', 'Chocolate', 'Strawberry']);

    next = 'flag';
    expect(await ask(client, 'ASK USER flag')).toBe('elicitation: accept {"overwrite":false}');
    expect(client.all('window/showMessageRequest').at(-1).actions.map((action: any) => action.title)).toEqual(['Yes', 'No']);
    next = 'confirm';
    expect(await ask(client, 'ASK USER confirm')).toBe('elicitation: accept {}');
    next = 'dismissed';
    expect(await ask(client, 'ASK USER pick')).toBe('elicitation: decline null');
  });

  it('are answered with a code action where the editor has no prompts (Helix)', async () => {
    const client = await start({ client: 'helix-25.01.1', env });
    const answered = ask(client, 'ASK USER pick');
    await client.waitFor('window/showMessage', (p) => p.message.startsWith('agent asks: Which one? (pick)'));
    const { uri } = await client.openFixture('workspace/retry.ts');
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } });
    const commands = actions.map((action: any) => (typeof action.command === 'string' ? action : action.command));
    const titles = commands.map((command: any) => command.title);
    expect(titles.slice(0, 4)).toEqual(['Buckley: answer «Which one? (pick)»: Vanilla', 'Buckley: answer «Which one? (pick)»: Chocolate', 'Buckley: answer «Which one? (pick)»: Strawberry', 'Buckley: decline «Which one? (pick)»']);
    expect(await client.request('workspace/executeCommand', commands[2])).toEqual({ answered: true });
    expect(await answered).toBe('elicitation: accept {"flavour":"s"}');
    // Answered: no longer offered.
    const after = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } });
    expect(after.map((action: any) => action.title)).not.toContain('Buckley: decline «Which one? (pick)»');
  });

  it("are withdrawn with their turn: a cancelled ask's question is no longer offered as code actions", async () => {
    const client = await start({ client: 'helix-25.01.1', env });
    const { CancellationTokenSource } = await import('vscode-jsonrpc');
    const source = new CancellationTokenSource();
    const cancelled = client.connection.sendRequest('buckley/ask', { question: 'ASK USER pick' }, source.token);
    await client.waitFor('window/showMessage', (p) => p.message.startsWith('agent asks: Which one? (pick)'));
    const { uri } = await client.openFixture('workspace/retry.ts');
    const titles = async () => (await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } })).map((action: any) => action.title);
    expect(await titles()).toContain('Buckley: decline «Which one? (pick)»');
    source.cancel();
    await expect(cancelled).rejects.toMatchObject({ code: -32800 });
    expect(await titles()).not.toContain('Buckley: decline «Which one? (pick)»');
  });

  it('that need typing are declined at once where the editor cannot type an answer, and the user is told what was asked', async () => {
    const client = await start({ client: 'neovim-0.10.4', env, answerMessageRequest: () => null });
    expect(await ask(client, 'ASK USER text')).toContain('elicitation: decline null');
    expect(client.all('window/showMessageRequest')).toEqual([]);
    await client.waitFor('window/showMessage', (p) => p.message === 'agent asks «Which one? (text)»: answer in a follow-up');
    await client.waitFor('window/logMessage', (p) => p.message.includes('asked: "Which one? (text)" — no answer typed: answer it in a follow-up'));
  });

  it('that need typing go to a client that opted in to buckley/askText (the Neovim module): the text typed reaches the agent, a number as a number', async () => {
    const asked: any[] = [];
    const counts = ['twelve', ' 12 '];
    const client = await start({
      client: 'neovim-0.10.4',
      env,
      initialize: { capabilities: { experimental: { buckley: { askText: true } } } },
      handlers: {
        'buckley/askText': (params: any) => {
          asked.push(params);
          return params.input === 'Your name' ? { text: 'Ada "the first" Lovelace' } : params.input === 'How many?' ? { text: counts.shift() } : null;
        },
      },
    });
    expect(await ask(client, 'ASK USER text')).toBe('elicitation: accept {"name":"Ada \\"the first\\" Lovelace"}');
    expect(asked).toEqual([{ message: 'Which one? (text)', input: 'Your name' }]);
    // A number field given words: declined, and said why.
    expect(await ask(client, 'ASK USER count')).toBe('elicitation: decline null');
    await client.waitFor('window/logMessage', (p) => p.message.includes('asked: "Which one? (count)" — declined: "twelve" is not a whole number'));
    expect(await ask(client, 'ASK USER count')).toBe('elicitation: accept {"count":12}');
    // Dismissed: declined.
    expect(await ask(client, 'ASK USER other')).toBe('elicitation: decline null');
  });

  it('that ask to open a web page (URL mode): "Open <host>" opens it in the browser through the editor, and the agent gets accept; a page that is no web address is declined', async () => {
    const opened: any[] = [];
    const client = await start({
      client: 'neovim-0.10.4',
      env,
      answerMessageRequest: (params) => params.actions.find((action: any) => action.title === 'Open login.example.com') ?? null,
      handlers: {
        'window/showDocument': (params: any) => {
          opened.push(params);
          return { success: true };
        },
      },
    });
    expect(await ask(client, 'ASK USER url')).toBe('elicitation: accept null');
    expect(client.all('window/showMessageRequest').at(-1)).toMatchObject({ message: 'Buckley: Log in to the service', actions: [{ title: 'Open login.example.com' }, { title: 'Decline' }] });
    expect(opened.filter((params) => params.external)).toEqual([{ uri: 'https://login.example.com/authorize?client=scripted', external: true }]);
    // file:///etc/passwd is no web page: declined without asking, and said.
    expect(await ask(client, 'ASK USER fileurl')).toBe('elicitation: decline null');
    expect(client.all('window/showMessageRequest')).toHaveLength(1);
    await client.waitFor('window/logMessage', (p) => p.message.includes('asked to open file:///etc/passwd: "Log in to the service" — declined: it is not a web address (http or https)'));
  });

  it('of several fields are asked one field at a time, and an optional one left unanswered is left out', async () => {
    const notes: (string | null)[] = ['extra hot', null];
    const client = await start({
      client: 'neovim-0.10.4',
      env,
      // (the capabilities given replace the payload's: the prompt is declared again)
      initialize: { capabilities: { window: { showMessage: {} }, experimental: { buckley: { askText: true } } } },
      answerMessageRequest: (params) => params.actions.find((action: any) => action.title === 'Large') ?? null,
      handlers: { 'buckley/askText': () => (notes.length && notes[0] !== null ? { text: notes.shift() } : (notes.shift(), null)) },
    });
    expect(await ask(client, 'ASK USER order')).toBe('elicitation: accept {"size":"l","note":"extra hot"}');
    expect(client.all('window/showMessageRequest').at(-1)).toMatchObject({ message: 'Buckley: Which one? (order) — Size (1 of 2)', actions: [{ title: 'Small' }, { title: 'Large' }] });
    expect(await ask(client, 'ASK USER order')).toBe('elicitation: accept {"size":"l"}');
  });
});
