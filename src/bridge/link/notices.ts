/**
 * What the user is told about the coordinator: a coordinator that does not keep asks read-only,
 * named once before the first ask; and each change of what is wrong with the link, said once (not
 * at every retry) — a bad agent setting as that setting, which says more than "set it".
 */
import type { ConfigProblem, Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import type { CoordinatorConnection } from './connection.js';
import type { PreflightProblem } from './preflight.js';
import { ASKS_NOT_READ_ONLY } from './readOnly.js';

export class CoordinatorNotices {
  /** What the editor was last told of the coordinator's state. */
  private lastSaid: string | undefined;
  private readonly warnedNotReadOnly = new WeakSet<CoordinatorConnection>();
  /** The settings problems last reported: they explain a missing agent better than "set it". */
  private settingsProblems: readonly ConfigProblem[] = [];

  constructor(
    private readonly editor: EditorClient,
    private readonly logger: Logger,
    private readonly config: () => Config,
  ) {}

  settingsProblemsFound(problems: readonly ConfigProblem[]): void {
    this.settingsProblems = problems;
    messages.error(this.editor, messages.problems(problems));
  }

  /** The coordinator's state changed (ready, or something is wrong). */
  stateChanged(coordinator: CoordinatorConnection): void {
    if (coordinator.state === 'ready' && !coordinator.keepsAsksReadOnly && !this.warnedNotReadOnly.has(coordinator)) {
      this.warnedNotReadOnly.add(coordinator);
      this.logger.warn(ASKS_NOT_READ_ONLY(coordinator.address ?? 'the configured address', coordinator.notes));
      messages.warn(this.editor, this.config().ask.requireReadOnly ? 'asks refused here: buckley.ask.requireReadOnly' : 'asks may edit files here: see buckley.ask.requireReadOnly');
    }
    this.say(coordinator.error ? (coordinator.errorSummary ?? coordinator.error) : undefined, coordinator.agentMissing);
  }

  /**
   * What startup's checks found before any connection: a problem is logged in full and said in a
   * few words; none (the settings were mended) clears it, so that it is said again if it returns.
   */
  preflight(problem: PreflightProblem | undefined): void {
    if (!problem) {
      this.lastSaid = undefined;
      return;
    }
    this.logger.warn(problem.message);
    this.say(problem.summary ?? problem.message, problem.agentMissing);
  }

  private say(summary: string | undefined, agentMissing: boolean): void {
    if (summary === this.lastSaid) return;
    this.lastSaid = summary;
    if (!summary) return;
    const agentSetting = this.settingsProblems.find((problem) => problem.key.startsWith('buckley.agent.'));
    if (agentMissing && agentSetting) messages.error(this.editor, messages.problems([agentSetting]));
    else messages.warn(this.editor, /see log/.test(summary) ? summary : `${summary} (see log)`);
  }
}
