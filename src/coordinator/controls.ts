/**
 * GetAgentControls, SetAgentModel and SetAgentMode: what the agent offers — its commands, models
 * and modes — and the model and mode its turns use, for the caller to show and change (the
 * editor's "choose model" and "choose mode", its completions of `/commands`, `buckley/status`).
 */
import * as grpc from '@grpc/grpc-js';
import type { AgentControls } from '../wire/contract.js';
import type { AgentDriver } from './agents/driver.js';
import { agentFailure, checkIdentity, fail, type Caller } from './callers.js';

type Unary<Request> = (call: grpc.ServerUnaryCall<Request, unknown> & Caller, callback: grpc.sendUnaryData<unknown>) => void;

/** How long finding out what an agent offers (starting it, a session opened and closed) may take. */
const DISCOVER_TIMEOUT_MS = 60_000;

export function controlHandlers(driver: () => AgentDriver | undefined, agentProblem: () => string | undefined): {
  GetAgentControls: Unary<{ agent_id: string; discover: boolean }>;
  SetAgentModel: Unary<{ agent_id: string; model: string }>;
  SetAgentMode: Unary<{ agent_id: string; mode: string }>;
} {
  const ready = (call: Caller, agentId: string) => {
    const denied = agentId ? checkIdentity(call, agentId) : undefined;
    if (denied) return { error: denied };
    const current = driver();
    if (!current?.controls) return { error: fail(grpc.status.FAILED_PRECONDITION, agentProblem() ?? `${current?.description ?? 'this agent'} offers no commands, models or modes to choose from`) };
    return { driver: current as AgentDriver & Required<Pick<AgentDriver, 'controls'>> };
  };
  /** A choice made: the controls then, or why not (INVALID_ARGUMENT: what the agent offers instead). */
  const answer = (chosen: AgentControls | { error: string }, callback: grpc.sendUnaryData<unknown>) => {
    if ('error' in chosen) return callback(fail(grpc.status.INVALID_ARGUMENT, chosen.error));
    callback(null, chosen satisfies AgentControls);
  };
  return {
    GetAgentControls: (call, callback) => {
      const found = ready(call, call.request.agent_id);
      if (found.error) return callback(found.error);
      const discovering = found.driver.controls(call.request.discover);
      withDeadline(discovering, DISCOVER_TIMEOUT_MS).then(
        (controls) => callback(null, controls),
        (error: unknown) => callback(agentFailure(error)),
      );
    },
    SetAgentModel: (call, callback) => {
      const found = ready(call, call.request.agent_id);
      if (found.error) return callback(found.error);
      if (!found.driver.chooseModel) return callback(fail(grpc.status.FAILED_PRECONDITION, `${found.driver.description} has no models to choose from`));
      answer(found.driver.chooseModel(call.request.model), callback);
    },
    SetAgentMode: (call, callback) => {
      const found = ready(call, call.request.agent_id);
      if (found.error) return callback(found.error);
      if (!found.driver.chooseMode) return callback(fail(grpc.status.FAILED_PRECONDITION, `${found.driver.description} has no modes to choose from`));
      answer(found.driver.chooseMode(call.request.mode), callback);
    },
  };
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the agent did not say what it offers within ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
