/**
 * `buckley.edit` ("Buckley: edit «…»"): which way an edit of the selection goes depends on the
 * coordinator. Buckley proposes edits itself (`propose_edits`): the bridge has the user review
 * them. Ours edits through its agent's reviewed writes, as a task (`edit_selection`).
 */
import { FEATURE } from '../../wire/features.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import type { CoordinatorSession } from '../link/calls.js';
import type { EditCommandArgs } from '../protocol.js';
import type { Proposals } from './proposals.js';
import type { TaskService } from './tasks.js';
import { responseError } from './outcomes.js';

/** How an edit that did not complete is named to the editor. */
const EDIT_WORDS = { failed: 'Buckley could not propose the edit', cancelled: 'the edit was cancelled' };

/** How long buckley.edit waits to learn whether the coordinator proposes edits itself. */
const EDIT_ROUTE_WAIT_MS = 10_000;

export interface EditRouteDependencies {
  editor: EditorClient;
  coordinator(): Promise<CoordinatorSession>;
  tasks: Pick<TaskService, 'edit'>;
  proposals: Pick<Proposals, 'propose'>;
}

export class EditRoute {
  constructor(private readonly deps: EditRouteDependencies) {}

  async edit(args: EditCommandArgs): Promise<unknown> {
    const coordinator = await this.deps.coordinator();
    // Known once it has answered: a coordinator still silent after EDIT_ROUTE_WAIT_MS gets the
    // task, which has deadlines of its own.
    await coordinator.whenSettled(EDIT_ROUTE_WAIT_MS);
    const offered = coordinator.features;
    if (!offered.includes(FEATURE.proposesEdits) || offered.includes(FEATURE.editSelection)) return this.deps.tasks.edit(args);
    const outcome = await this.deps.proposals.propose(coordinator, args).catch((error: Error) => {
      messages.error(this.deps.editor, `edit failed: ${error.message}`);
      throw error;
    });
    if (outcome.status === 'completed') return { proposed: outcome.proposed, applied: outcome.applied };
    if (outcome.status === 'failed') messages.error(this.deps.editor, `edit failed: ${outcome.failure.summary ?? outcome.failure.message}`);
    throw responseError(outcome, EDIT_WORDS);
  }
}
