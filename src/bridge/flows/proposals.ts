/**
 * Edit from a selection with a coordinator that proposes edits itself (Buckley's ProposeEdits,
 * feature `propose_edits`) rather than editing through its agent's writes (ours: `edit_selection`):
 * the best proposal for each file is shown as a diff and asked about like an agent's write, and
 * applied by the user's choice — in the buffer as an undoable edit, or on disk for a file not open.
 */
import { randomUUID } from 'node:crypto';
import { NotReadable, readFileBounded, realPath, unreadableWhy, writeText } from '../../fileAccess.js';
import { MAX_READ_BYTES } from '../../wire/contract.js';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Range } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Config } from '../../config.js';
import { changeSummary, describeChange, unifiedDiff } from '../../edits.js';
import type { Logger } from '../../logger.js';
import { canonicalUri } from '../../uri.js';
import type { ProposeEditsResponse } from '../../wire/contract.js';
import type { CoordinatorSession, Outcome } from '../link/calls.js';
import type { AgentEdits } from './agentEdits.js';
import type { ApprovalService } from './approvals.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import type { Targets } from './target.js';

export interface ProposalDependencies {
  editor: EditorClient;
  approvals: ApprovalService;
  agentEdits: AgentEdits;
  targets: Targets;
  logger: Logger;
  config(): Config;
  /** The open document of a URI, if any. */
  documentAt(uri: string): TextDocument | undefined;
}

/** The decision is the bridge's own: there is no coordinator turn waiting for it. */
const decidedHere = { decideApproval: async () => undefined };

export class Proposals {
  constructor(private readonly deps: ProposalDependencies) {}

  /** Asks the coordinator for edits, has the user review each file's, applies the approved ones. */
  async propose(coordinator: CoordinatorSession, input: { instruction: string; uri: string; range: Range }): Promise<Outcome<{ proposed: number; applied: string[] }>> {
    const { deps } = this;
    const config = deps.config();
    const target = deps.targets.resolve(input, config, input.instruction);
    const outcome = await coordinator.proposeEdits({ instruction: input.instruction, context: target.built.context, signal: AbortSignal.timeout(config.task.timeoutMs), timeoutMs: config.task.timeoutMs });
    if (outcome.status !== 'completed') return outcome;
    const response = outcome.proposal;
    const proposals = bestPerFile(response);
    if (proposals.length === 0) {
      messages.info(deps.editor, messages.fit('no edit proposed for «', input.instruction, '»'));
      return { status: 'completed', proposed: 0, applied: [] };
    }
    const applied: string[] = [];
    for (const proposal of proposals) {
      if (await this.review(proposal, input, response.summary)) applied.push(proposal.uri);
    }
    messages.info(deps.editor, messages.fit(`${applied.length ? 'applied' : 'discarded'} the edit «`, input.instruction, '»'));
    return { status: 'completed', proposed: proposals.length, applied };
  }

  /** One file's proposal: shown, decided, applied if approved. */
  private async review(proposal: ProposeEditsResponse['edits'][number], input: { uri: string; range: Range }, summary: string): Promise<boolean> {
    const { deps } = this;
    const uri = canonicalUri(proposal.uri);
    const path = fileURLToPath(uri);
    const open = deps.documentAt(uri);
    const before = open ? open.getText() : readBefore(path);
    // There, but not a file the server reads (too big, a pipe, not allowed): an edit of it is not made from nothing.
    if (typeof before !== 'string') {
      messages.warn(deps.editor, messages.fit('', basename(path), ` ${before.problem}: edit not shown`));
      return false;
    }
    const after = TextDocument.applyEdits(open ?? TextDocument.create(uri, '', 0, before), proposal.edits.map((edit) => ({ range: edit.range, newText: edit.new_text })));
    const change = changeSummary(before, after);
    const name = basename(path);
    const decision = await deps.approvals.handle({
      taskId: `proposal-${randomUUID()}`,
      approval: {
        execution_id: randomUUID().replaceAll('-', ''),
        tool: `Apply the proposed edit to ${name}`,
        parameters: { path, change: `${describeChange(change)} lines` },
        risk: 'medium',
        tool_call_id: '',
        agent_id: 'coordinator',
        title: proposal.title || proposal.summary || summary,
        reason: '',
        kind: 'edit',
        locations: [path],
        diff: unifiedDiff(name, before, after),
        lines_added: change.added,
        lines_removed: change.removed,
      },
      coordinator: decidedHere,
      uri: input.uri,
      range: input.range,
    });
    if (!decision.approved) return false;
    if (open) {
      const outcome = await deps.agentEdits.apply({ path, base: before, content: after });
      if (outcome.open) {
        if (!outcome.applied) messages.warn(deps.editor, messages.fit('not applied to ', name, `: ${outcome.message}`));
        return outcome.applied;
      }
    }
    // Changed on disk while the user looked at the diff: what they approved is not what it would do.
    const now = readBefore(path);
    if (now !== before) {
      messages.warn(deps.editor, messages.fit('', name, ' changed on disk during your review: not applied'));
      return false;
    }
    try {
      await writeText(realPath(path) ?? path, after);
      return true;
    } catch (error) {
      messages.warn(deps.editor, messages.fit('not applied to ', name, `: ${(error as Error).message}`));
      return false;
    }
  }
}

/** The best-ranked proposal for each file (rank 0 counts as unranked, after ranked ones). */
function bestPerFile(response: ProposeEditsResponse): ProposeEditsResponse['edits'] {
  const best = new Map<string, ProposeEditsResponse['edits'][number]>();
  const order = (rank: number) => (rank > 0 ? rank : Number.MAX_SAFE_INTEGER);
  for (const proposal of response.edits) {
    if (!proposal.uri.startsWith('file:') || proposal.edits.length === 0) continue;
    const known = best.get(proposal.uri);
    if (!known || order(proposal.rank) < order(known.rank)) best.set(proposal.uri, proposal);
  }
  return [...best.values()];
}

/** A proposal's file as it is on disk (not open in the editor): empty where there is none; what stands there instead of a file the server reads, said. */
function readBefore(path: string): string | { problem: string } {
  try {
    return readFileBounded(path, MAX_READ_BYTES).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    return { problem: error instanceof NotReadable ? error.reason : `cannot be read (${unreadableWhy(error)})` };
  }
}
