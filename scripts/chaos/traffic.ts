import type { GatewayProcess } from "../../test/billing/_support.ts";
import { bearer, sleep } from "../../test/helpers/common.ts";
import type { Fleet } from "./fleet.ts";
import type { Observations } from "./observations.ts";
import type { Random } from "./random.ts";
import { CHAT_MODELS, EMBED_MODEL, IMAGE_MODEL, SPEECH_MODEL, type Account } from "./world.ts";

/** One request the clients can make, and how to tell that its body arrived whole. */
interface Call {
  what: string;
  path: string;
  body: unknown;
  /** How the body is read: one JSON document, SSE text, or audio bytes. */
  read: "json" | "sse" | "bytes";
  /**
   * Whether the client saw a whole answer: a JSON body of the right shape, a stream's end
   * event (then the connection may break: the client has its answer), or a body that ended.
   */
  whole(text: string, ended: boolean): boolean;
}

/** What the driver of a soak can hook into: a one-shot SIGKILL at the receipt of a whole success. */
export interface TrafficHooks {
  onWholeSuccess?: (gw: GatewayProcess) => void;
}

const WORDS = ["balance", "ledger", "stream", "token", "model", "gateway", "crash", "hold", "lease", "price", "answer", "client"];

function prompt(random: Random): string {
  return Array.from({ length: random.int(4, 70) }, () => random.pick(WORDS)).join(" ");
}

const jsonWith = (check: (json: any) => boolean) => (text: string, ended: boolean) => {
  if (!ended) return false;
  try {
    return check(JSON.parse(text));
  } catch {
    return false;
  }
};

/** The three caller formats: where a request goes, its body, and how a whole answer is told. */
const CALLER_FORMATS = {
  openai: {
    path: (_model: string, _stream: boolean) => "/v1/chat/completions",
    body: (model: string, text: string, maxTokens: number, stream: boolean) => ({ model, max_tokens: maxTokens, stream, messages: [{ role: "user", content: text }] }),
    endEvent: "data: [DONE]",
    isAnswer: (json: any) => json.object === "chat.completion",
  },
  anthropic: {
    path: (_model: string, _stream: boolean) => "/v1/messages",
    body: (model: string, text: string, maxTokens: number, stream: boolean) => ({ model, max_tokens: maxTokens, stream, messages: [{ role: "user", content: text }] }),
    endEvent: "event: message_stop",
    isAnswer: (json: any) => json.type === "message",
  },
  gemini: {
    path: (model: string, stream: boolean) => `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
    body: (_model: string, text: string, maxTokens: number) => ({ contents: [{ role: "user", parts: [{ text }] }], generationConfig: { maxOutputTokens: maxTokens } }),
    // A Gemini stream has no end event: its last chunk carries the finish reason, and the body then ends.
    endEvent: null,
    isAnswer: (json: any) => Array.isArray(json.candidates),
  },
} as const;

/** A chat request in one of the three caller formats, to any chat model (translated or passed through). */
function chatCall(random: Random): Call {
  const model = random.pick(CHAT_MODELS);
  const stream = random.chance(0.5);
  const name = random.pick(["openai", "anthropic", "gemini"] as const);
  const format = CALLER_FORMATS[name];
  const { endEvent } = format;
  return {
    what: `${name}${stream ? " stream" : ""} -> ${model}`,
    path: format.path(model, stream),
    body: format.body(model, prompt(random), random.int(24, 96), stream),
    read: stream ? "sse" : "json",
    whole: !stream ? jsonWith(format.isAnswer) : endEvent ? (t) => t.includes(endEvent) : (t, ended) => ended && t.includes('"finishReason"'),
  };
}

function mediaCall(random: Random): Call {
  const kind = random.pick(["embeddings", "images", "speech"] as const);
  if (kind === "embeddings") {
    const input = Array.from({ length: random.int(1, 3) }, () => prompt(random));
    return { what: "embeddings", path: "/v1/embeddings", body: { model: EMBED_MODEL, input }, read: "json", whole: jsonWith((j) => j.object === "list") };
  }
  if (kind === "images") {
    return { what: "images", path: "/v1/images/generations", body: { model: IMAGE_MODEL, prompt: prompt(random), size: "256x256" }, read: "json", whole: jsonWith((j) => Array.isArray(j.data)) };
  }
  return { what: "speech", path: "/v1/audio/speech", body: { model: SPEECH_MODEL, input: prompt(random), response_format: "wav" }, read: "bytes", whole: (t, ended) => ended && t.length > 0 };
}

/**
 * Reads a body to its end, or until `hangUpAfter` chunks when given; returns the text (audio
 * is not kept: one "x" if any byte came), whether the body ended, and whether the client hung up.
 */
async function readBody(response: Response, call: Call, hangUpAfter: number | null, controller: AbortController): Promise<{ text: string; ended: boolean; hungUp: boolean }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    for (let chunks = 0; ; chunks++) {
      if (hangUpAfter !== null && chunks >= hangUpAfter) {
        controller.abort();
        return { text, ended: false, hungUp: true };
      }
      const { done, value } = await reader.read();
      if (done) return { text, ended: true, hungUp: false };
      text += call.read === "bytes" ? (text === "" ? "x" : "") : decoder.decode(value, { stream: true });
    }
  } catch {
    // The instance died or the client hung up (an early abort): what came is all there is.
    return { text, ended: false, hungUp: controller.signal.aborted };
  }
}

/** One client request to a random live instance, with a random account; counted in `observations`. */
async function oneRequest(fleet: Fleet, accounts: readonly Account[], random: Random, observations: Observations, hooks: TrafficHooks): Promise<void> {
  const gw = fleet.pick(random);
  if (!gw) {
    observations.count("no instance up");
    await sleep(50);
    return;
  }
  const account = random.pick(accounts);
  const call = random.chance(0.8) ? chatCall(random) : mediaCall(random);
  const controller = new AbortController();
  // Most clients read to the end; some hang up before the answer, some in the middle of the body.
  const plan = random.weighted({ whole: 80, early: 5, midway: 15 });
  if (plan === "early") setTimeout(() => controller.abort(), random.int(0, 30));
  observations.requests++;
  try {
    const response = await gw.fetch(call.path, { method: "POST", headers: bearer(account.key), body: JSON.stringify(call.body), signal: controller.signal });
    if (response.status !== 200) {
      observations.status(response.status, `${call.what} on pid ${gw.pid}`, await response.text());
      return;
    }
    const requestId = response.headers.get("x-request-id") ?? "";
    const hangUpAfter = plan === "midway" ? random.int(call.read === "json" ? 0 : 1, 6) : null;
    const { text, ended, hungUp } = await readBody(response, call, hangUpAfter, controller);
    if (!call.whole(text, ended)) {
      observations.count(hungUp ? "200 hung up" : ended ? "200 not whole" : "200 cut off");
      return;
    }
    observations.count("200 whole");
    observations.completed.push({ requestId, userId: account.userId, what: call.what });
    hooks.onWholeSuccess?.(gw);
  } catch {
    observations.count(controller.signal.aborted ? "hung up" : "connection lost");
  }
}

/** Runs `concurrency` clients until `stop()` says so; resolves when every client has finished its request. */
export async function runClients(
  concurrency: number,
  stop: () => boolean,
  fleet: Fleet,
  accounts: readonly Account[],
  random: Random,
  observations: Observations,
  hooks: TrafficHooks,
): Promise<void> {
  const client = async () => {
    while (!stop()) {
      await oneRequest(fleet, accounts, random, observations, hooks);
      // A little thought between requests keeps the load moderate on a shared machine.
      await sleep(random.int(0, 10));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
}
