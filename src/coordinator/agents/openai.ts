/**
 * The OpenAI-compatible driver: streaming chat completions (`POST {baseUrl}/chat/completions`
 * with `stream: true`, server-sent events) for Ollama, llama.cpp server, vLLM, LM Studio and
 * OpenAI. Plain question and answer: no tools, so nothing to approve. The API key is read from
 * an environment variable and never logged. The turn's tokens come from the stream's last event
 * (`stream_options.include_usage`), where the server sends them.
 */
import type { PromptImage } from '../../wire/images.js';
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import { withEarlierTurns } from '../../wire/prompt.js';
import { errorBody, untilAnswered } from './httpBodies.js';
import { FillInTheMiddle, type Completion, type CompletionRequest } from './fillInTheMiddle.js';
import type { TurnUsage } from '../../wire/contract.js';
import { AgentError, type AgentDriver, type AgentTurn, type TurnResult, type TurnSink } from './driver.js';

export interface OpenAiDriverOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  logger: Logger;
  /** Deadline for the reply to start (its status and headers); the stream after it has none of its own. */
  connectTimeoutMs?: number;
}

const choiceSchema = z.object({
  delta: z.nullish(z.object({ content: z.nullish(z.string()) })),
  finish_reason: z.nullish(z.string()),
});
const usageSchema = z.object({ prompt_tokens: z._default(z.int(), 0), completion_tokens: z._default(z.int(), 0) });
// `usage` is read apart: a server that counts in its own shape still has its answer taken.
const chunkSchema = z.object({ choices: z._default(z.array(choiceSchema), []), usage: z.optional(z.unknown()) });

/** An event is a piece of an answer (a few bytes to a few KB): past this, the stream is not an answer. */
const MAX_EVENT_CHARS = 8 * 1024 * 1024;

class OversizedEvent extends Error {}

/** Conversations whose history is kept. */
const MAX_CONVERSATIONS = 32;

const SYSTEM_PROMPT =
  'You are a coding assistant answering questions about code a developer selected in their editor. Answer in concise, well-formatted markdown. Do not rewrite their files.';

/** A chat message: its text, or its parts (the text, then the images the prompt carries, as data URLs). */
type ChatMessage = { role: string; content: string | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[] };

/** The user's message: its text alone, or with the prompt's images (a model that takes none says so in its error). */
function withImages(text: string, images: PromptImage[] | undefined): ChatMessage['content'] {
  if (!images?.length) return text;
  return [{ type: 'text', text }, ...images.map((image) => ({ type: 'image_url' as const, image_url: { url: `data:${image.mimeType};base64,${image.data}` } }))];
}

export class OpenAiDriver implements AgentDriver {
  readonly description: string;
  readonly shortName: string;
  readonly writesFiles = false;
  /** The server refused `stream_options` (a strict one, from before it existed): asked without it since. */
  private withoutUsage = false;
  /** Conversation history per session, so follow-up questions have context. */
  private readonly histories = new Map<string, { role: 'user' | 'assistant'; content: string }[]>();

  private readonly fim: FillInTheMiddle;

  constructor(private readonly options: OpenAiDriverOptions) {
    this.description = `OpenAI-compatible model \`${options.model}\` at ${options.baseUrl}`;
    this.shortName = options.model;
    this.fim = new FillInTheMiddle({ ...options, description: this.description });
  }

  complete(request: CompletionRequest, signal: AbortSignal): Promise<Completion> {
    return this.fim.complete(request, signal);
  }

  async run(turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    const history = this.histories.get(turn.sessionKey) ?? [];
    // A conversation this process does not hold (a restart, one forgotten): its earlier turns come along.
    const prompt = history.length ? turn.prompt : withEarlierTurns(turn.prompt, turn.earlier);
    const messages: ChatMessage[] = [{ role: 'system', content: SYSTEM_PROMPT }, ...history, { role: 'user', content: withImages(prompt, turn.images) }];
    const stream = await this.request(messages, signal);
    if (!stream) return { text: '', stopReason: 'cancelled' };

    let text = '';
    let finish: string | undefined;
    let usage: TurnUsage | undefined;
    try {
      for await (const data of serverSentEvents(stream, signal)) {
        if (data === '[DONE]') break;
        let json: unknown;
        try {
          json = JSON.parse(data);
        } catch {
          throw new AgentError(`${this.description} sent an event that is not JSON: ${data.slice(0, 120)}`);
        }
        const chunk = chunkSchema.safeParse(json);
        if (!chunk.success) throw new AgentError(`${this.description} sent an unexpected event: ${data.slice(0, 120)}`);
        const counted = chunk.data.usage ? usageSchema.safeParse(chunk.data.usage) : undefined;
        if (counted?.success) usage = { cost: 0, currency: '', context_used: 0, context_size: 0, input_tokens: counted.data.prompt_tokens, output_tokens: counted.data.completion_tokens };
        for (const choice of chunk.data.choices) {
          const delta = choice.delta?.content;
          if (delta) {
            text += delta;
            sink.text(delta);
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        }
      }
    } catch (error) {
      if (signal.aborted) return { text, stopReason: 'cancelled' };
      if (error instanceof OversizedEvent) throw new AgentError(`${this.description} sent an event over ${MAX_EVENT_CHARS / 1024 / 1024} MB: not an answer's piece (is ${this.options.baseUrl} an OpenAI-compatible server?)`);
      throw error instanceof AgentError ? error : new AgentError(`${this.description}: ${(error as Error).message}`);
    }
    if (signal.aborted) return { text, stopReason: 'cancelled' };
    this.histories.delete(turn.sessionKey); // re-inserted: the most recent conversation comes last
    this.histories.set(turn.sessionKey, [...history, { role: 'user' as const, content: prompt }, { role: 'assistant' as const, content: text }].slice(-20));
    // Conversations kept: as many as an ACP agent's idle sessions; the oldest is forgotten.
    for (const key of this.histories.keys()) {
      if (this.histories.size <= MAX_CONVERSATIONS) break;
      this.histories.delete(key);
    }
    return { text, stopReason: finish === 'length' ? 'max_tokens' : 'end_turn', ...(usage && (usage.input_tokens || usage.output_tokens) ? { usage } : {}) };
  }

  /**
   * POST /chat/completions, streamed: the events to read; undefined when cancelled. A server
   * that refuses `stream_options` (HTTP 400 naming it) is asked again without it, and from then on.
   */
  private async request(messages: ChatMessage[], signal: AbortSignal): Promise<ReadableStream<Uint8Array> | undefined> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    // The deadline is for the answer to start: the stream that follows takes as long as the model does.
    const connecting = untilAnswered(signal, this.options.connectTimeoutMs ?? 30_000);
    const body = { model: this.options.model, messages, stream: true, ...(this.withoutUsage ? {} : { stream_options: { include_usage: true } }) };
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify(body),
        signal: connecting.signal,
      });
    } catch (error) {
      if (signal.aborted) return undefined;
      const why = connecting.timedOut ? `did not start answering within ${(this.options.connectTimeoutMs ?? 30_000) / 1000} s` : (error as Error).message;
      throw new AgentError(`${this.description}: ${why}. Is the server running? (setting buckley.agent.openai.baseUrl)`);
    } finally {
      connecting.answered();
    }
    if (response.ok && response.body) return response.body;
    const said = (await errorBody(response)).slice(0, 300);
    if (response.status === 400 && !this.withoutUsage && /stream_options/.test(said)) {
      this.withoutUsage = true;
      this.options.logger.info(`${this.description} does not take stream_options: asked without it (no token counts from it)`);
      return this.request(messages, signal);
    }
    throw new AgentError(`${this.description} answered HTTP ${response.status}: ${said || response.statusText}`);
  }

  async check(signal: AbortSignal): Promise<string> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/models`;
    const response = await fetch(url, {
      headers: this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {},
      signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.connectTimeoutMs ?? 10_000)]),
    }).catch((error: Error) => {
      throw new AgentError(`${url} did not answer: ${error.message}`);
    });
    if (!response.ok) throw new AgentError(`${url} answered HTTP ${response.status}`);
    return `${this.description} answers`;
  }

  endSession(sessionKey: string): void {
    for (const key of [...this.histories.keys()]) if (key === sessionKey || key.startsWith(`${sessionKey}#`)) this.histories.delete(key);
  }

  async close(): Promise<void> {
    this.histories.clear();
  }
}

/** The `data:` payloads of a server-sent event stream; an event longer than MAX_EVENT_CHARS is an error (what it held is not kept). */
async function* serverSentEvents(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let held = 0;
  const reader = body.getReader();
  const onAbort = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, newline).replace(/\r$/, '');
        buffer = buffer.slice(newline + 1);
        if (line === '') {
          if (data.length) yield data.join('\n');
          data = [];
          held = 0;
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
          held += line.length;
        }
      }
      if (held + buffer.length > MAX_EVENT_CHARS) throw new OversizedEvent();
    }
    if (data.length) yield data.join('\n');
  } finally {
    signal.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
}
