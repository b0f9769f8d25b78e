/**
 * `buckley.conversations`: the conversations kept (stores/conversations.ts), newest first, as a
 * markdown document opened where the editor opens documents, else in the log.
 */
import { MessageType } from 'vscode-languageserver';
import { oneLine } from '../../text.js';
import { uriToPath } from '../../uri.js';
import type { Features } from '../capabilities.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import type { Answers } from '../stores/answers.js';
import type { Conversations, ConversationSummary } from '../stores/conversations.js';

export interface ConversationListDependencies {
  editor: EditorClient;
  features(): Features;
  conversations: Pick<Conversations, 'list'>;
  answers: Pick<Answers, 'showListing'>;
}

export async function listConversations(deps: ConversationListDependencies): Promise<{ conversations: ConversationSummary[] }> {
  const list = deps.conversations.list();
  const listing = conversationListing(list, uriToPath);
  deps.editor.log(MessageType.Info, listing);
  if (deps.features().showDocument) await deps.answers.showListing('conversations.md', listing);
  else messages.info(deps.editor, `${list.length} conversation(s): listed in the log`);
  return { conversations: list };
}

/** The conversations as a markdown list a person reads: the first question, turns, when, and the document's path. */
export function conversationListing(list: readonly ConversationSummary[], pathOf: (uri: string) => string): string {
  if (list.length === 0) return '# Buckley conversations\n\nNone yet: ask about some code, and follow up in the answer document.\n';
  const lines = list.map((conversation) => {
    const when = conversation.updated.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
    const where = conversation.document ? `\n  ${pathOf(conversation.document)}` : '';
    return `- ${oneLine(conversation.title, 100)} — ${conversation.turns} turn(s), ${when}${where}`;
  });
  return `# Buckley conversations\n\nNewest first. Open one (\`gf\` on its path) and write below its last line to follow it up.\n\n${lines.join('\n')}\n`;
}
