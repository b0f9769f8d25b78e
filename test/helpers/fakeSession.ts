/**
 * A fake coordinator session for the in-process flow tests: the `CoordinatorSession` the flows
 * call, scripted per test. It records every call, and its task script sends events as a
 * coordinator would (progress, an approval it then waits for, a write, a change made).
 */
import type {
  ApprovalDecision,
  AskCall,
  AskOutcome,
  CoordinatorSession,
  Outcome,
  StreamCall,
  StreamOutcome,
  WatchCall,
} from '../../src/bridge/link/calls.js';
import type { AgentControls, ProposeEditsResponse, TaskEvent, TaskSummary } from '../../src/wire/contract.js';
import { FEATURE } from '../../src/wire/features.js';

type Approval = NonNullable<TaskEvent['approval']>;

/** A TaskEvent with the wire's defaults. */
export function taskEvent(fields: Partial<TaskEvent>): TaskEvent {
  return { task_id: '', plan_id: '', status: 'in_progress', progress: 0, message: '', tool_executions: [], answer_delta: '', thought_delta: '', sequence: 0, ...fields };
}

/** An approval request as our coordinator sends it. */
export function approval(fields: Partial<Approval> & { execution_id: string }): Approval {
  return { tool: 'Run ls', parameters: {}, risk: 'low', agent_id: 'agent', title: '', reason: '', kind: 'execute', locations: [], diff: '', lines_added: 0, lines_removed: 0, tool_call_id: '', ...fields };
}

export class FakeSession implements CoordinatorSession {
  features: string[] = [FEATURE.answerStream, FEATURE.streamTask, FEATURE.approvalEvents, FEATURE.readOnlyAsks, FEATURE.conversations];
  readonly asks: AskCall[] = [];
  readonly tasks: StreamCall[] = [];
  readonly decisions = new Map<string, ApprovalDecision>();
  private readonly deciding = new Map<string, (decision: ApprovalDecision) => void>();
  /** Told after each call is recorded (the flows harness wakes the editor's waiters with it). */
  onCall: () => void = () => undefined;

  /** How an ask is answered; by default in two streamed pieces. */
  answer: (call: AskCall) => Promise<AskOutcome> = async (call) => {
    call.onDelta?.('The answer ');
    call.onDelta?.(`to «${call.question}».`);
    return { status: 'completed', answer: `The answer to «${call.question}».` };
  };

  /** How a task runs; by default it completes with a short answer. */
  task: (call: StreamCall) => Promise<StreamOutcome> = async (call) => {
    call.onEvent?.(taskEvent({ message: 'Reading the code' }));
    return { status: 'completed', answer: `Did «${call.query}».` };
  };

  ask(call: AskCall): Promise<AskOutcome> {
    this.asks.push(call);
    this.onCall();
    return this.answer(call);
  }

  runTask(call: StreamCall): Promise<StreamOutcome> {
    this.tasks.push(call);
    this.onCall();
    return this.task(call);
  }

  /** What ProposeEdits answers (Buckley's way of editing a selection); by default no edit. */
  proposal: () => Promise<Outcome<{ proposal: ProposeEditsResponse }>> = async () => ({ status: 'completed', proposal: { plan_id: '', task_id: '', summary: '', edits: [] } });

  proposeEdits(): Promise<Outcome<{ proposal: ProposeEditsResponse }>> {
    return this.proposal();
  }

  async inlineCompletions(): Promise<Outcome<{ texts: string[] }>> {
    return { status: 'completed', texts: [] };
  }

  async decideApproval(executionId: string, decision: ApprovalDecision): Promise<void> {
    this.decisions.set(executionId, decision);
    this.deciding.get(executionId)?.(decision);
  }

  async whenSettled(): Promise<void> {}

  /** The tasks the coordinator knows (a team's), as the test sets them. */
  teamTasks: TaskSummary[] = [];
  readonly watched: WatchCall[] = [];

  async listTasks(call: { runningOnly: boolean }): Promise<Outcome<{ tasks: TaskSummary[] }>> {
    this.onCall();
    return { status: 'completed', tasks: this.teamTasks.filter((task) => !call.runningOnly || !['completed', 'failed', 'cancelled'].includes(task.status)) };
  }

  /** How a watched task goes; by default it completes with a short answer. */
  watching: (call: WatchCall) => Promise<StreamOutcome> = async (call) => {
    call.onEvent?.(taskEvent({ message: 'Reading the code' }));
    return { status: 'completed', answer: `Watched ${call.taskId}.` };
  };

  watchTask(call: WatchCall): Promise<StreamOutcome> {
    this.watched.push(call);
    this.onCall();
    return this.watching(call);
  }

  /** What the agent offers, as the test sets it; none: a coordinator that does not say. */
  controls: AgentControls | undefined;
  readonly chosenModels: string[] = [];

  async agentControls(call: { discover: boolean; model?: string }): Promise<Outcome<{ controls: AgentControls }>> {
    this.onCall();
    if (!this.controls) return { status: 'failed', failure: { message: 'the coordinator does not say what its agent offers' } };
    if (call.model === undefined) return { status: 'completed', controls: this.controls };
    const model = this.controls.models.find((choice) => choice.id === call.model || choice.name === call.model);
    if (!model) return { status: 'failed', failure: { message: `the agent offers no model "${call.model}"` } };
    this.chosenModels.push(model.id);
    this.controls = { ...this.controls, model: model.id, model_source: 'chosen in the editor' };
    return { status: 'completed', controls: this.controls };
  }

  /** Within a task's script: asks for an approval, as a coordinator does, and waits for the decision. */
  awaitApproval(call: StreamCall, request: Approval): Promise<ApprovalDecision> {
    const decided = new Promise<ApprovalDecision>((resolve) => this.deciding.set(request.execution_id, resolve));
    call.onEvent?.(taskEvent({ status: 'awaiting_approval', message: `Waiting: ${request.tool}`, approval: request }));
    return decided;
  }
}
