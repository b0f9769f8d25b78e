/**
 * What `initialize`'s answer names: the server's commands and its custom protocol's version —
 * apart from protocol.ts, whose schemas need zod, so that the answer is given without loading it.
 */

/** Commands listed in `executeCommandProvider.commands` (Zed and Neovim 0.10+ need them listed). */
export const Commands = {
  ask: 'buckley.ask',
  runTask: 'buckley.runTask',
  cancelTask: 'buckley.cancelTask',
  approve: 'buckley.approve',
  deny: 'buckley.deny',
  status: 'buckley.status',
  showLog: 'buckley.showLog',
  undoTaskEdits: 'buckley.undoTaskEdits',
  edit: 'buckley.edit',
  followUp: 'buckley.followUp',
  newConversation: 'buckley.newConversation',
  conversations: 'buckley.conversations',
  chooseModel: 'buckley.chooseModel',
  chooseMode: 'buckley.chooseMode',
  answerQuestion: 'buckley.answerQuestion',
  keepChange: 'buckley.keepChange',
  undoChange: 'buckley.undoChange',
  watchTask: 'buckley.watchTask',
} as const;

/** What `InitializeResult.capabilities.experimental.buckley` carries. */
export const PROTOCOL_VERSION = '0.1';
