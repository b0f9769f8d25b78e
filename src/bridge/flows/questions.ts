/**
 * The agent's questions to the user (our coordinator's `question` events: ACP elicitation as a
 * choice): the editor's prompt where it has one; where it has none (Helix), a message saying so
 * and one code action per answer ("Buckley: answer «…»: Yes") until one is chosen. Dismissed,
 * declined. A question to type the answer to goes to a client that opted in to `buckley/askText`
 * (the Neovim module: vim.ui.input); any other editor cannot type one: declined, and said so.
 * The coordinator ends a question nobody answers (with its turn, or after its time).
 */
import { CancellationTokenSource, MessageType, ShowMessageRequest, type Command } from 'vscode-languageserver';
import type { Logger } from '../../logger.js';
import { oneLine } from '../../text.js';
import type { Question } from '../../wire/contract.js';
import type { Features } from '../capabilities.js';
import { AskTextRequest } from '../protocol.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import { showDocument } from '../editor/client.js';
import type { EditorQuestions } from '../link/calls.js';
import { Commands } from '../names.js';

/** As long as the coordinator waits for the answer: a question left open longer is gone there. */
const QUESTION_TIMEOUT_MS = 15 * 60_000;
/** How long the editor may take to hand a web page to the browser. */
const OPEN_TIMEOUT_MS = 10_000;

export interface QuestionDependencies {
  editor: EditorClient;
  features: () => Features;
  logger: Logger;
}

interface Open {
  question: Question;
  settle(option: number | undefined): void;
}

export class AgentQuestions implements EditorQuestions {
  /** Questions waiting for a code action (editors with no prompts), by id. */
  private readonly open = new Map<string, Open>();

  constructor(private readonly deps: QuestionDependencies) {}

  /** The option chosen (its index), or the text typed, or undefined: declined, or the turn is over (`ended`: its code actions go). */
  ask(question: Question, ended: AbortSignal): Promise<number | string | undefined> {
    if (question.input) return this.typed(question, ended);
    if (!question.url) return this.choose(question, ended);
    // A web page to open (the agent's login, say): opened by the editor once the user says so.
    return this.choose(question, ended).then(async (option) => {
      if (option !== 0 || ended.aborted) return option;
      return (await this.openPage(question.url)) ? 0 : undefined;
    });
  }

  /** The user's choice (its index), or undefined. */
  private choose(question: Question, ended: AbortSignal): Promise<number | undefined> {
    const { editor, features, logger } = this.deps;
    logger.info(`the agent asks: "${oneLine(question.message, 200)}" (${question.options.join(' / ')})`);
    if (features().showMessageRequest) {
      return editor
        .request(ShowMessageRequest.type, { type: MessageType.Info, message: `Buckley: ${oneLine(question.message, 300)}`, actions: question.options.map((title) => ({ title })) }, { timeoutMs: QUESTION_TIMEOUT_MS })
        .then((picked) => {
          const index = picked ? question.options.indexOf(picked.title) : -1;
          return index >= 0 ? index : undefined;
        })
        .catch(() => undefined);
    }
    messages.info(editor, messages.fit('agent asks: ', question.message, ' — answer with a code action'));
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(undefined), QUESTION_TIMEOUT_MS);
      timer.unref();
      const settle = (option: number | undefined) => {
        if (!this.open.delete(question.request_id)) return;
        clearTimeout(timer);
        ended.removeEventListener('abort', gone);
        resolve(option);
      };
      const gone = () => settle(undefined);
      ended.addEventListener('abort', gone, { once: true });
      this.open.set(question.request_id, { question, settle });
    });
  }

  /**
   * Opens the agent's web page in the user's browser (window/showDocument, external); where the
   * editor cannot, the log has the link and a message says so: the user agreed, the page is theirs
   * to open. False (declined) for anything but a web page.
   */
  private async openPage(url: string): Promise<boolean> {
    const { editor, features, logger } = this.deps;
    // Only a web page, whoever the coordinator is: never a file or a program's link handed to the OS.
    if (!/^https?:\/\//i.test(url)) {
      logger.warn(`not opened: the agent's page ${oneLine(url, 200)} is no web address (http or https)`);
      messages.info(editor, "not opened: the agent's page is no web address (see log)");
      return false;
    }
    if (features().showDocument && (await showDocument(editor, { uri: url, external: true }, OPEN_TIMEOUT_MS))) return true;
    logger.warn(`open this page of the agent's in your browser (the editor did not): ${url}`);
    messages.info(editor, "open the agent's page in your browser: its link is in the log");
    return true;
  }

  /** A question whose answer is typed: to a client that can type one (`buckley/askText`); declined, and said, where none can. */
  private async typed(question: Question, ended: AbortSignal): Promise<string | undefined> {
    const { editor, features, logger } = this.deps;
    logger.info(`the agent asks: "${oneLine(question.message, 200)}" (to type: ${oneLine(question.input, 80)})`);
    if (!features().askText) {
      messages.info(editor, messages.fit('agent asks «', question.message, '»: answer in a follow-up'));
      return undefined;
    }
    // Withdrawn when its turn ends, or when the coordinator stops waiting for it.
    const withdrawn = new CancellationTokenSource();
    const withdraw = () => withdrawn.cancel();
    const timer = setTimeout(withdraw, QUESTION_TIMEOUT_MS);
    ended.addEventListener('abort', withdraw, { once: true });
    try {
      // The agent's words, on one line (no escapes, no line breaks), as any prompt of ours shows them.
      const typed = await editor.request(AskTextRequest.type, { message: oneLine(question.message, 300), input: oneLine(question.input, 80) }, { token: withdrawn.token });
      return typeof typed?.text === 'string' ? typed.text : undefined;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
      ended.removeEventListener('abort', withdraw);
      withdrawn.dispose();
    }
  }

  /** buckley.answerQuestion: an answer (index; -1 declines) to a question waiting for a code action. */
  answer(id: string, option: number): { answered: boolean } {
    const open = this.open.get(id);
    if (!open) return { answered: false };
    open.settle(option >= 0 && option < open.question.options.length ? option : undefined);
    return { answered: true };
  }

  /** The open questions' answers, as code actions offered anywhere. */
  commands(): Command[] {
    return [...this.open.values()].flatMap(({ question }) => {
      const about = oneLine(question.message, 40);
      const answers = question.options.map((option, index) => ({ title: `Buckley: answer «${about}»: ${oneLine(option, 40)}`, command: Commands.answerQuestion, arguments: [{ id: question.request_id, option: index }] }));
      return [...answers, { title: `Buckley: decline «${about}»`, command: Commands.answerQuestion, arguments: [{ id: question.request_id, option: -1 }] }];
    });
  }
}
