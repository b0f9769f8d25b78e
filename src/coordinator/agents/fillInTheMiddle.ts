/**
 * Code completion at the cursor from an OpenAI-compatible server, the best way it offers:
 * fill-in-the-middle through `/v1/completions` with `suffix` (OpenAI's completions API, vLLM,
 * Ollama), llama.cpp's own `/infill`, else a chat completion asked for the missing code only.
 * The first way that the server has is remembered. Aborting the signal aborts the HTTP request.
 */
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import { AgentError } from './driver.js';
import { boundedText, MAX_BODY_BYTES } from './httpBodies.js';

export interface CompletionRequest {
  /** The code before the cursor, and after it. */
  prefix: string;
  suffix: string;
  /** The document's language, for a chat model's prompt. */
  language?: string;
}

export interface Completion {
  text: string;
  finishReason: string;
}

type Way = 'completions' | 'infill' | 'chat';
const WAYS: Way[] = ['completions', 'infill', 'chat'];
const MAX_TOKENS = 128;

const completionsSchema = z.object({ choices: z.array(z.object({ text: z.string(), finish_reason: z.nullish(z.string()) })) });
const infillSchema = z.object({ content: z.string(), stop_type: z.optional(z.string()) });
const chatSchema = z.object({ choices: z.array(z.object({ message: z.object({ content: z.nullish(z.string()) }), finish_reason: z.nullish(z.string()) })) });

/** The server answered that it has no such endpoint (or does not take its parameters): try the next way. */
class NotOffered extends Error {}

export class FillInTheMiddle {
  private way: Way | undefined;

  constructor(
    private readonly options: { baseUrl: string; model: string; apiKey?: string; logger: Logger; description: string; connectTimeoutMs?: number },
  ) {}

  async complete(request: CompletionRequest, signal: AbortSignal): Promise<Completion> {
    for (const way of this.way ? [this.way] : WAYS) {
      try {
        const completion = await this.by(way, request, signal);
        if (this.way !== way) this.options.logger.info(`${this.options.description} completes code by ${describe(way)}`);
        this.way = way;
        return completion;
      } catch (error) {
        if (!(error instanceof NotOffered)) throw error;
        this.options.logger.debug(`${this.options.description}: ${error.message}; trying the next way`);
      }
    }
    throw new AgentError(`${this.options.description} offers no way to complete code (tried /completions with a suffix, /infill and /chat/completions)`);
  }

  private async by(way: Way, { prefix, suffix, language }: CompletionRequest, signal: AbortSignal): Promise<Completion> {
    const base = this.options.baseUrl.replace(/\/+$/, '');
    switch (way) {
      case 'completions': {
        const body = await this.post(`${base}/completions`, { model: this.options.model, prompt: prefix, suffix, max_tokens: MAX_TOKENS, temperature: 0, stream: false }, signal);
        const choice = parse(completionsSchema, body, this.options.description).choices[0];
        return { text: choice?.text ?? '', finishReason: choice?.finish_reason ?? 'stop' };
      }
      case 'infill': {
        // llama.cpp serves /infill at its root, beside /v1.
        const root = base.replace(/\/v1$/, '');
        const body = await this.post(`${root}/infill`, { input_prefix: prefix, input_suffix: suffix, n_predict: MAX_TOKENS }, signal);
        const reply = parse(infillSchema, body, this.options.description);
        return { text: reply.content, finishReason: reply.stop_type === 'limit' ? 'length' : 'stop' };
      }
      case 'chat': {
        const messages = [
          { role: 'system', content: 'You complete code. Reply with only the code that goes where <CURSOR> is: no explanation, no code fence, nothing that is already before or after it.' },
          { role: 'user', content: `${language ? `Language: ${language}\n` : ''}${prefix}<CURSOR>${suffix}` },
        ];
        const body = await this.post(`${base}/chat/completions`, { model: this.options.model, messages, max_tokens: MAX_TOKENS, temperature: 0, stream: false }, signal);
        const choice = parse(chatSchema, body, this.options.description).choices[0];
        return { text: unfenced(choice?.message.content ?? ''), finishReason: choice?.finish_reason ?? 'stop' };
      }
    }
  }

  private async post(url: string, body: object, signal: AbortSignal): Promise<unknown> {
    // Bounded even for a caller that set no deadline: a model that never answers must not hold the call.
    const deadline = AbortSignal.timeout(this.options.connectTimeoutMs ?? 30_000);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, deadline]),
      });
      if (response.status === 404 || response.status === 405 || response.status === 501) {
        await response.body?.cancel();
        throw new NotOffered(`${url} answered HTTP ${response.status}`);
      }
      const read = await boundedText(response);
      if (read === undefined) throw new AgentError(`${this.options.description} answered ${url} with a body over ${MAX_BODY_BYTES / 1024 / 1024} MB: not a completion`);
      text = read;
    } catch (error) {
      if (signal.aborted || error instanceof NotOffered || error instanceof AgentError) throw error;
      const why = deadline.aborted ? `no answer from ${url} in ${(this.options.connectTimeoutMs ?? 30_000) / 1000} s` : (error as Error).message;
      throw new AgentError(`${this.options.description}: ${why}. Is the server running? (setting buckley.agent.openai.baseUrl)`);
    }
    if (!response.ok) {
      // A server without FIM for this model says so in a 400 ("suffix not supported").
      if (response.status === 400 && /suffix|infill|not supported|fim/i.test(text)) throw new NotOffered(`${url} answered HTTP 400: ${text.slice(0, 200)}`);
      throw new AgentError(`${this.options.description} answered HTTP ${response.status}: ${text.slice(0, 300) || response.statusText}`);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new AgentError(`${this.options.description} answered ${url} with something that is not JSON: ${text.slice(0, 120)}`);
    }
  }
}

function parse<T>(schema: z.core.$ZodType<T>, body: unknown, description: string): T {
  const parsed = z.safeParse(schema, body);
  if (!parsed.success) throw new AgentError(`${description} sent an unexpected completion: ${JSON.stringify(body).slice(0, 200)}`);
  return parsed.data;
}

/** A chat model's reply without the code fence it may have put around it anyway. */
function unfenced(text: string): string {
  const fenced = /^\s*```[^\n]*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return fenced ? fenced[1]! : text;
}

function describe(way: Way): string {
  return way === 'completions' ? 'fill-in-the-middle (/completions with a suffix)' : way === 'infill' ? "llama.cpp's /infill" : 'chat (no fill-in-the-middle offered)';
}
