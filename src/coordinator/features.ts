import { FEATURE } from '../wire/features.js';

/** What this coordinator offers (what each means: wire/features.ts); `inline_completion` with a model that completes. */
export const FEATURES = [
  FEATURE.chat,
  FEATURE.streamTask,
  FEATURE.answerStream,
  FEATURE.toolApproval,
  FEATURE.approvalEvents,
  FEATURE.readsContext,
  FEATURE.readOnlyAsks,
  FEATURE.askIntent,
  FEATURE.editorBuffers,
  FEATURE.editSelection,
  FEATURE.conversations,
  FEATURE.usage,
  FEATURE.plan,
  FEATURE.thoughts,
  FEATURE.questions,
  FEATURE.taskEvents,
  FEATURE.promptImages,
  FEATURE.clientTerminals,
] as const;
