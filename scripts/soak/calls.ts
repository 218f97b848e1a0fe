import { speechWav } from "../../test/helpers/openai-media-upstream.ts";
import { PROCESS_MANAGEMENT_KEY } from "../../test/billing/_support.ts";
import { bearer } from "../../test/helpers/common.ts";
import type { Random } from "../chaos/random.ts";
import { CHAT_MODELS, MEDIA_MODELS, type Account } from "./world.ts";

/** One request of the mix: where it goes, what it sends, and how a whole answer is told. */
export interface Call {
  what: string;
  /** The account whose key it carries; null for the operator's admin calls. */
  account: Account | null;
  /** The model a usage row is written for; null for calls that write none. */
  meteredModel: string | null;
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  /** A JSON or text body, or a multipart upload. */
  body?: string | Upload;
  /** Whether the answer arrives as events (an SSE chat stream) or bytes, so a client may hang up midway through it. */
  streamed: boolean;
  /** Whether a body that ended is the whole answer: a JSON document of the right shape, a stream's last event. */
  whole(text: string): boolean;
}

/** A transcription form: its text fields, then the file, which the client sends piece by piece. */
export interface Upload {
  fields: [string, string][];
  file: Uint8Array;
  filename: string;
}

const WORDS = ["soak", "ledger", "stream", "token", "model", "gateway", "socket", "hold", "lease", "timer", "answer", "upload"];
const text = (random: Random, most = 60) => Array.from({ length: random.int(3, most) }, () => random.pick(WORDS)).join(" ");

const json = (check: (body: any) => boolean) => (body: string) => {
  try {
    return check(JSON.parse(body));
  } catch {
    return false;
  }
};

const WEATHER_PARAMETERS = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const WEATHER = { name: "get_weather", description: "The weather in a city" };

/** The four caller formats of chat: path, body, tool definitions and how a whole answer is told. */
const CHAT_FORMATS = {
  openai: {
    path: () => "/v1/chat/completions",
    body: (model: string, prompt: string, maxTokens: number, stream: boolean) => ({ model, max_tokens: maxTokens, stream, messages: [{ role: "user", content: prompt }] }),
    tools: [{ type: "function", function: { ...WEATHER, parameters: WEATHER_PARAMETERS } }],
    streamEnd: /^data: \[DONE\]$/m,
    isAnswer: (body: any) => body.object === "chat.completion",
  },
  responses: {
    path: () => "/v1/responses",
    body: (model: string, prompt: string, maxTokens: number, stream: boolean) => ({ model, max_output_tokens: maxTokens, stream, input: prompt }),
    tools: [{ type: "function", ...WEATHER, parameters: WEATHER_PARAMETERS }],
    // A mock answer cut at max_output_tokens is incomplete, and whole.
    streamEnd: /^event: response\.(completed|incomplete)$/m,
    isAnswer: (body: any) => body.object === "response",
  },
  anthropic: {
    path: () => "/v1/messages",
    body: (model: string, prompt: string, maxTokens: number, stream: boolean) => ({ model, max_tokens: maxTokens, stream, messages: [{ role: "user", content: prompt }] }),
    tools: [{ ...WEATHER, input_schema: WEATHER_PARAMETERS }],
    streamEnd: /^event: message_stop$/m,
    isAnswer: (body: any) => body.type === "message",
  },
  gemini: {
    path: (model: string, stream: boolean) => `/v1beta/models/${model}:${stream ? "streamGenerateContent?alt=sse" : "generateContent"}`,
    body: (_model: string, prompt: string, maxTokens: number) => ({ contents: [{ role: "user", parts: [{ text: prompt }] }], generationConfig: { maxOutputTokens: maxTokens } }),
    tools: [{ functionDeclarations: [{ ...WEATHER, parameters: WEATHER_PARAMETERS }] }],
    // A Gemini stream has no end event: its last chunk carries the finish reason.
    streamEnd: /"finishReason"/,
    isAnswer: (body: any) => Array.isArray(body.candidates),
  },
} as const;

/** A caller format of chat: openai, responses, anthropic or gemini. */
export type ChatFormat = keyof typeof CHAT_FORMATS;
export const CHAT_FORMAT_NAMES = Object.keys(CHAT_FORMATS) as ChatFormat[];

/** The key as each format's SDK sends it, sometimes: Anthropic's x-api-key, Google's header or `?key=`. */
function keyHeaders(random: Random, format: ChatFormat, key: string): { headers: Record<string, string>; query: string } {
  const base = { "content-type": "application/json" };
  if (format === "anthropic") return { headers: { ...base, "anthropic-version": "2023-06-01", ...(random.chance(0.5) ? { "x-api-key": key } : { authorization: `Bearer ${key}` }) }, query: "" };
  if (format === "gemini" && random.chance(0.5)) return random.chance(0.5) ? { headers: { ...base, "x-goog-api-key": key }, query: "" } : { headers: base, query: `key=${key}` };
  return { headers: { ...base, authorization: `Bearer ${key}` }, query: "" };
}

function withQuery(path: string, query: string): string {
  return query === "" ? path : `${path}${path.includes("?") ? "&" : "?"}${query}`;
}

function chatCall(random: Random, account: Account): Call {
  // Drawn in this order so that a seed plays the same mix as before.
  const model = random.pick(CHAT_MODELS);
  const name = random.pick(CHAT_FORMAT_NAMES);
  const stream = random.chance(0.5);
  return formatChatCall(random, account, name, model, stream, random.chance(0.25));
}

/** A chat call in format `name` to `model`; the prompt, its length and how the key is sent are drawn. */
export function formatChatCall(random: Random, account: Account, name: ChatFormat, model: string, stream: boolean, tools: boolean): Call {
  const format = CHAT_FORMATS[name];
  const { headers, query } = keyHeaders(random, name, account.key);
  return {
    what: `${name}${stream ? " stream" : ""}${tools ? " tools" : ""} -> ${model}`,
    account,
    meteredModel: model,
    method: "POST",
    path: withQuery(format.path(model, stream), query),
    headers,
    body: JSON.stringify({ ...format.body(model, text(random), random.int(16, 96), stream), ...(tools ? { tools: format.tools } : {}) }),
    streamed: stream,
    whole: stream ? (body) => format.streamEnd.test(body) : json(format.isAnswer),
  };
}

function jsonCall(what: string, account: Account, meteredModel: string | null, path: string, body: unknown, isAnswer: (body: any) => boolean): Call {
  return { what, account, meteredModel, method: "POST", path, headers: bearer(account.key), body: JSON.stringify(body), streamed: false, whole: json(isAnswer) };
}

function getCall(what: string, account: Account | null, path: string, headers: Record<string, string>, isAnswer: (body: any) => boolean): Call {
  return { what, account, meteredModel: null, method: "GET", path, headers: { ...bearer(account?.key ?? PROCESS_MANAGEMENT_KEY), ...headers }, streamed: false, whole: json(isAnswer) };
}

/** A few seconds of speech-like WAV, made once: uploads differ only in their text fields. */
const AUDIO = speechWav(WORDS.join(" ").repeat(2));

/** A body of OpenAI media events (speech, transcript, images) is whole once its end event has come. */
const endsWithEvent = (type: string) => (answer: string) => answer.includes(`"type":"${type}"`);

function transcriptionCall(random: Random, account: Account, file = AUDIO, filename = "soak.wav"): Call {
  const task = random.pick(["transcriptions", "translations"] as const);
  const format = random.pick(["json", "text", "verbose_json", "srt"]);
  // Transcripts in json or text may come as transcript.text.* events; translations never do.
  const events = task === "transcriptions" && (format === "json" || format === "text") && random.chance(0.5);
  const fields: [string, string][] = [["model", MEDIA_MODELS.transcribe], ["response_format", format], ...(events ? [["stream", "true"] as [string, string]] : [])];
  return {
    what: `${task} ${format}${events ? " events" : ""}`,
    account,
    meteredModel: MEDIA_MODELS.transcribe,
    method: "POST",
    path: `/v1/audio/${task}`,
    headers: { authorization: `Bearer ${account.key}` },
    body: { fields, file, filename },
    streamed: events,
    whole: events ? endsWithEvent("transcript.text.done") : (answer) => answer.length > 0,
  };
}

function mediaCall(random: Random, account: Account): Call {
  const kind = random.weighted({ embeddings: 3, geminiEmbed: 1, rerank: 2, images: 2, speech: 2, transcription: 3 });
  switch (kind) {
    case "embeddings":
      return jsonCall("embeddings", account, MEDIA_MODELS.embed, "/v1/embeddings", { model: MEDIA_MODELS.embed, input: [text(random), text(random)] }, (b) => b.object === "list");
    case "geminiEmbed":
      return jsonCall("gemini embedContent", account, MEDIA_MODELS.embed, `/v1beta/models/${MEDIA_MODELS.embed}:embedContent`, { content: { parts: [{ text: text(random) }] } }, (b) => Array.isArray(b.embedding?.values));
    case "rerank":
      return jsonCall("rerank", account, MEDIA_MODELS.rerank, "/v1/rerank", { model: MEDIA_MODELS.rerank, query: text(random, 6), documents: [text(random), text(random), text(random)], top_n: 2 }, (b) => Array.isArray(b.results));
    case "images": {
      const body = { model: MEDIA_MODELS.image, prompt: text(random), size: "256x256" };
      if (random.chance(0.7)) return jsonCall("images", account, MEDIA_MODELS.image, "/v1/images/generations", body, (b) => Array.isArray(b.data));
      const call = jsonCall("images events", account, MEDIA_MODELS.image, "/v1/images/generations", { ...body, stream: true, partial_images: random.int(0, 2) }, () => true);
      return { ...call, streamed: true, whole: endsWithEvent("image_generation.completed") };
    }
    case "speech": {
      const format = random.pick(["wav", "mp3", "flac"]);
      const events = random.chance(0.3);
      const call = jsonCall(`speech ${format}${events ? " events" : ""}`, account, MEDIA_MODELS.speech, "/v1/audio/speech", { model: MEDIA_MODELS.speech, input: text(random), response_format: format, ...(events ? { stream_format: "sse" } : {}) }, () => true);
      return { ...call, streamed: true, whole: events ? endsWithEvent("speech.audio.done") : (answer) => answer.length > 0 };
    }
    case "transcription":
      return transcriptionCall(random, account);
  }
}

/** Calls that write no usage row: model lists in three shapes, the balance, token counting. */
function readCall(random: Random, account: Account): Call {
  const kind = random.pick(["openai models", "anthropic models", "gemini models", "balance", "count tokens"] as const);
  switch (kind) {
    case "openai models":
      return getCall(kind, account, "/v1/models", {}, (b) => b.object === "list");
    case "anthropic models":
      return getCall(kind, account, "/v1/models?limit=5", { "anthropic-version": "2023-06-01" }, (b) => Array.isArray(b.data));
    case "gemini models":
      return getCall(kind, account, "/v1beta/models", {}, (b) => Array.isArray(b.models));
    case "balance":
      return getCall(kind, account, "/v1/balance", {}, (b) => typeof b.balance === "number");
    case "count tokens":
      return { ...jsonCall(kind, account, null, "/v1/messages/count_tokens", { model: "soak-anthropic", messages: [{ role: "user", content: text(random) }] }, (b) => typeof b.input_tokens === "number"), headers: { ...bearer(account.key), "anthropic-version": "2023-06-01" } };
  }
}

/** Bodies the gateway must refuse with a 4xx (a 402 where the hold cannot be covered). */
function badCall(random: Random, account: Account): Call {
  const refused = () => false;
  const post = (what: string, path: string, body: string, meteredModel: string | null = null): Call => ({ what: `bad: ${what}`, account, meteredModel, method: "POST", path, headers: bearer(account.key), body, streamed: false, whole: refused });
  switch (random.int(0, 10)) {
    case 0:
      return post("not JSON", "/v1/chat/completions", '{"model": "soak-openai", "messages": [');
    case 1:
      return post("messages a string", "/v1/chat/completions", JSON.stringify({ model: "soak-openai", messages: "hello" }));
    case 2:
      return post("empty anthropic content", "/v1/messages", JSON.stringify({ model: "soak-anthropic", max_tokens: 10, messages: [{ role: "user", content: "" }] }));
    case 3:
      return post("gemini contents a number", "/v1beta/models/soak-gemini:generateContent", JSON.stringify({ contents: 5 }));
    case 4:
      return post("negative token IDs", "/v1/embeddings", JSON.stringify({ model: MEDIA_MODELS.embed, input: [1, -2, 3] }));
    case 5:
      return post("unknown model", "/v1/chat/completions", JSON.stringify({ model: "soak-nothing", messages: [{ role: "user", content: "hi" }] }));
    case 6:
      return post("image size", "/v1/images/generations", JSON.stringify({ model: MEDIA_MODELS.image, prompt: "x", size: "3x3" }));
    case 7:
      // Held at 1e9 output tokens: no account covers it, so a 402 (and its usage row).
      return post("uncoverable hold", "/v1/chat/completions", JSON.stringify({ model: "soak-openai", max_tokens: 1_000_000_000, messages: [{ role: "user", content: "hi" }] }), "soak-openai");
    case 8:
      // A key never issued, new each time: the gateway's memory of unknown keys must stay bounded.
      return { ...chatCall(random, { ...account, key: `sk-gw-${crypto.randomUUID().replaceAll("-", "")}` }), what: "bad: unknown key", meteredModel: null, whole: refused };
    case 9:
      return getCall("bad: API key on the admin API", account, "/v1/admin/users", {}, refused);
    default:
      return { ...transcriptionCall(random, account, new TextEncoder().encode("not audio at all ".repeat(64)), "notes.wav"), what: "bad: upload of no audio", whole: refused };
  }
}

/** The operator: a top-up (some sent again with the same Idempotency-Key and body) or a listing. */
export class Operator {
  readonly #recentTopUps: { key: string; body: string }[] = [];

  constructor(private readonly accounts: readonly Account[]) {}

  call(random: Random): Call {
    const listing = random.pick(["/users?limit=5", "/usage?limit=20", "/tokens", "/channels", "/prices", "/settings"]);
    if (random.chance(0.4)) return getCall(`admin GET ${listing.split("?")[0]}`, null, `/v1/admin${listing}`, {}, (b) => typeof b === "object" && b !== null);
    const again = this.#recentTopUps.length > 0 && random.chance(0.3) ? random.pick(this.#recentTopUps) : null;
    const account = random.pick(this.accounts);
    // Small amounts: the poor account comes back for a few requests, then runs out again.
    const topUp = again ?? { key: crypto.randomUUID(), body: JSON.stringify({ user_id: account.userId, amount: account.name === "poor" ? 0.005 : 1 }) };
    if (!again && this.#recentTopUps.push(topUp) > 20) this.#recentTopUps.shift();
    return {
      what: again ? "admin top-up again" : "admin top-up",
      account: null,
      meteredModel: null,
      method: "POST",
      path: "/v1/admin/topup",
      headers: { ...bearer(PROCESS_MANAGEMENT_KEY), "idempotency-key": topUp.key },
      body: topUp.body,
      streamed: false,
      whole: json((b) => typeof b.transaction_id === "string"),
    };
  }
}

/** One call of the mix, for a random account. */
export function drawCall(random: Random, accounts: readonly Account[], operator: Operator): Call {
  // The limited account is refused at once (429) past its few requests a minute: drawn often, it would be most of the load.
  const name = random.weighted({ rich: 55, poor: 35, limited: 10 });
  const account = accounts.find((a) => a.name === name)!;
  switch (random.weighted({ chat: 55, media: 18, read: 12, admin: 7, bad: 8 })) {
    case "chat":
      return chatCall(random, account);
    case "media":
      return mediaCall(random, account);
    case "read":
      return readCall(random, account);
    case "admin":
      return operator.call(random);
    case "bad":
      return badCall(random, account);
  }
}
