/**
 * The agent's web page to open (ACP elicitation, URL mode), in the bridge, with the in-process
 * editor: a web page the user agreed to is handed to the editor to open in the browser; anything
 * else is never opened, whatever the coordinator sent, and the question is declined.
 */
import { describe, expect, it } from 'vitest';
import type { Features } from '../../src/bridge/capabilities.js';
import { AgentQuestions } from '../../src/bridge/flows/questions.js';
import { RootLogger } from '../../src/logger.js';
import { FakeEditor } from '../helpers/fakeEditor.js';

const logged: string[] = [];
const logger = new RootLogger('info', (_level, line) => logged.push(line));
const features = () => ({ showMessageRequest: true, showDocument: true }) as Features;
const question = (url: string) => ({ request_id: 'q1', message: 'Log in to the service', options: ['Open it', 'Decline'], input: '', url });

describe("the agent's web page", () => {
  it('is opened in the browser once the user agrees, and only a web page is', async () => {
    const editor = new FakeEditor();
    editor.respond('window/showMessageRequest', () => ({ title: 'Open it' }));
    const questions = new AgentQuestions({ editor, features, logger });
    expect(await questions.ask(question('https://login.example.com/a'), new AbortController().signal)).toBe(0);
    expect(editor.requests('window/showDocument')).toEqual([{ uri: 'https://login.example.com/a', external: true }]);

    expect(await questions.ask(question('file:///etc/passwd'), new AbortController().signal)).toBeUndefined();
    expect(editor.requests('window/showDocument')).toHaveLength(1);
    expect(logged.some((line) => line.includes('not opened: the agent\'s page file:///etc/passwd is no web address'))).toBe(true);
  });
});
