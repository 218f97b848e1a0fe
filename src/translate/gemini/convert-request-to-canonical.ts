import type { ChatMessage, ChatRequest, ContentPart, ReasoningRequest, ResponseFormat, ToolChoice, Untranslated } from "../../canonical/chat.ts";
import * as v from "valibot";
import { FileDataPart, FunctionCallPart, FunctionResponsePart, InlineDataPart, SERVER_WORK_FIELDS, TextPart, type CountTokensRequest, type GenerateContentRequest } from "./request-schema.ts";
import { jsonSchemaInLowerCase, jsonSchemaOfOpenApi } from "./normalize-schema.ts";
import { nothingUntranslated, severalAnswers } from "../untranslated.ts";
import { geminiLevel } from "../reasoning.ts";

type GeminiPart = GenerateContentRequest["contents"][number]["parts"][number];

/**
 * Pairs function calls with their responses. Gemini may send ids on either, both or neither;
 * a response without an id answers the oldest unanswered call of its name (as Gemini pairs
 * them). A call without an id is known by its name, made a tool id other formats take
 * (letters, digits, '_' and '-'), with a number after it when the history calls that
 * function again: Anthropic refuses two tool_use blocks of one id, and OpenAI pairs results
 * by id.
 */
class CallPairing {
  #unanswered = new Map<string, string[]>();
  #issued = new Set<string>();

  call(call: { name: string; id?: string }): string {
    const id = call.id ?? this.#idFor(call.name);
    this.#issued.add(id);
    this.#unanswered.set(call.name, [...(this.#unanswered.get(call.name) ?? []), id]);
    return id;
  }

  #idFor(name: string): string {
    const base = name.replace(/[^a-zA-Z0-9_-]/g, "_");
    let id = base;
    for (let n = 2; this.#issued.has(id); n++) id = `${base}_${n}`;
    return id;
  }

  response(response: { name: string; id?: string }): string {
    const queue = this.#unanswered.get(response.name) ?? [];
    const id = response.id ?? queue[0] ?? response.name;
    this.#unanswered.set(response.name, queue.filter((pending) => pending !== id));
    return id;
  }
}

const isImage = (mimeType: string | undefined) => mimeType?.startsWith("image/") === true;

/**
 * A part in canonical form, or null for one the canonical form does not carry, noted in
 * `untranslated`: thoughts and code execution are Gemini's record of its own work; other
 * media (PDF, audio, video) and non-image files only Gemini can read.
 */
function partOf(part: GeminiPart, pairing: CallPairing, where: string, untranslated: Untranslated): ContentPart | null {
  if (v.is(TextPart, part)) {
    if (part.thought !== true) return { type: "text", text: part.text };
    untranslated.replay.push(`${where} (thought)`);
    return null;
  }
  if (v.is(InlineDataPart, part)) {
    if (isImage(part.inlineData.mimeType)) return { type: "image", url: `data:${part.inlineData.mimeType};base64,${part.inlineData.data}` };
    untranslated.input.push(`${where} (inlineData ${part.inlineData.mimeType})`);
    return null;
  }
  if (v.is(FileDataPart, part)) {
    if (isImage(part.fileData.mimeType)) return { type: "image", url: part.fileData.fileUri };
    untranslated.input.push(`${where} (fileData ${part.fileData.mimeType ?? "of unknown type"})`);
    return null;
  }
  if (v.is(FunctionCallPart, part)) {
    const call = part.functionCall;
    return { type: "tool_call", id: pairing.call(call), name: call.name, arguments: JSON.stringify(call.args ?? {}) };
  }
  if (v.is(FunctionResponsePart, part)) {
    const result = part.functionResponse;
    // Media a function returned (Gemini 3's multimodal function responses): results are text elsewhere.
    if (result.parts !== undefined && result.parts.length > 0) untranslated.input.push(`${where} (functionResponse with parts)`);
    // A response holding only `error` is how Gemini callers report a failed call.
    const failed = Object.keys(result.response).length === 1 && Object.hasOwn(result.response, "error");
    return { type: "tool_result", toolCallId: pairing.response(result), content: JSON.stringify(result.response), ...(failed ? { isError: true } : {}) };
  }
  untranslated.replay.push(`${where} (${SERVER_WORK_FIELDS.find((field) => field in part)})`);
  return null;
}

function messagesOf(body: GenerateContentRequest, untranslated: Untranslated): ChatMessage[] {
  const out: ChatMessage[] = [];
  const system = body.systemInstruction;
  if (system !== undefined) {
    const text = typeof system === "string" ? system : system.parts.map((p) => p.text ?? "").join("\n");
    out.push({ role: "system", parts: [{ type: "text", text }] });
  }
  const pairing = new CallPairing();
  for (const [i, content] of body.contents.entries()) {
    const parts = content.parts.map((part, j) => partOf(part, pairing, `contents[${i}].parts[${j}]`, untranslated)).filter((p) => p !== null);
    const results = parts.filter((p) => p.type === "tool_result");
    const rest = parts.filter((p) => p.type !== "tool_result");
    if (results.length > 0) appendTurn(out, "tool", results);
    if (rest.length > 0) appendTurn(out, content.role === "model" ? "assistant" : "user", rest);
  }
  return out;
}

/**
 * Adds parts to the conversation, a model turn (or its function responses) continuing the last
 * message of that role: genai's chat sessions record a streamed answer as a content per chunk,
 * which are deltas of one turn. Kept apart, a turn of function calls and its trailing text
 * reached OpenAI as two assistant messages, and OpenAI refuses tool calls not answered at
 * once. User contents stay apart: their texts are separate messages, not one to be joined.
 */
function appendTurn(out: ChatMessage[], role: ChatMessage["role"], parts: ContentPart[]): void {
  const previous = out.at(-1);
  if (role !== "user" && previous?.role === role) previous.parts.push(...parts);
  else out.push({ role, parts });
}

/**
 * Gemini's function calling mode: ANY forces a call (of the one allowed function, when one is
 * named); VALIDATED lets the model answer in text or a call, held to the schemas, which is
 * auto for formats without that mode.
 */
function toolChoiceOf(body: GenerateContentRequest): ToolChoice | undefined {
  const config = body.toolConfig?.functionCallingConfig;
  if (!config?.mode) return undefined;
  if (config.mode === "NONE") return "none";
  if (config.mode === "ANY") {
    const only = config.allowedFunctionNames;
    return only?.length === 1 ? { name: only[0]! } : "required";
  }
  return "auto";
}

/**
 * The declarations a call may name: with ANY or VALIDATED, only allowedFunctionNames (other
 * formats have no such list, so the rest are not offered); all of them otherwise, or when the
 * list names none of them.
 */
function callableDeclarations<T extends { name: string }>(body: GenerateContentRequest, declarations: T[]): T[] {
  const config = body.toolConfig?.functionCallingConfig;
  const allowed = config?.mode === "ANY" || config?.mode === "VALIDATED" ? config.allowedFunctionNames : undefined;
  if (!allowed?.length) return declarations;
  const kept = declarations.filter((d) => allowed.includes(d.name));
  return kept.length > 0 ? kept : declarations;
}

/**
 * JSON output asked for with responseMimeType, held to the schema given in either of Gemini's
 * two schema fields. Gemini always holds the answer to that schema (constrained decoding), so
 * it is strict: another upstream is asked to hold it too, or says it cannot.
 */
function responseFormatOf(config: GenerationConfig): ResponseFormat | undefined {
  if (config.responseMimeType !== "application/json") return undefined;
  const schema = config.responseJsonSchema ? jsonSchemaInLowerCase(config.responseJsonSchema) : config.responseSchema && jsonSchemaOfOpenApi(config.responseSchema);
  return schema ? { type: "json_schema", schema, strict: true } : { type: "json" };
}

type GenerationConfig = NonNullable<GenerateContentRequest["generationConfig"]>;

/**
 * The thinking asked for: off (a budget of 0), a budget, a level, or the model's choice
 * (-1, or thought summaries asked for alone). The caller sees thoughts with includeThoughts.
 */
function reasoningOf(config: GenerationConfig): Pick<ChatRequest, "reasoning" | "showReasoning"> {
  const thinking = config.thinkingConfig;
  const showReasoning = thinking?.includeThoughts === true;
  const budget = thinking?.thinkingBudget;
  const level = geminiLevel(thinking?.thinkingLevel);
  if (budget === 0) return { reasoning: { effort: "none" }, showReasoning };
  const reasoning: ReasoningRequest = {};
  if (budget !== undefined && budget > 0) reasoning.budgetTokens = budget;
  if (level !== undefined) reasoning.effort = level;
  const asked = Object.keys(reasoning).length > 0 || budget === -1 || showReasoning;
  return { ...(asked ? { reasoning } : {}), showReasoning };
}

/** A validated generateContent body for `model` in the canonical form, the body itself kept for a gemini upstream. */
export function convertGeminiRequestToCanonical(body: GenerateContentRequest, model: string, stream: boolean): ChatRequest {
  const config = body.generationConfig ?? {};
  const declarations = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
  const untranslated = nothingUntranslated();
  // Tools Gemini runs itself (googleSearch, codeExecution, urlContext...).
  for (const [i, tool] of (body.tools ?? []).entries()) {
    for (const name of Object.keys(tool)) if (name !== "functionDeclarations") untranslated.input.push(`tools[${i}] (${name})`);
  }
  return {
    model,
    native: { format: "gemini", body, untranslated, answers: severalAnswers(config.candidateCount, "generationConfig.candidateCount", untranslated) },
    messages: messagesOf(body, untranslated),
    params: {
      temperature: config.temperature,
      topP: config.topP,
      topK: config.topK,
      maxTokens: config.maxOutputTokens,
      stop: config.stopSequences,
      presencePenalty: config.presencePenalty,
      frequencyPenalty: config.frequencyPenalty,
      seed: config.seed,
    },
    tools:
      declarations.length === 0
        ? undefined
        : callableDeclarations(body, declarations).map((d) => ({
            name: d.name,
            description: d.description,
            parameters: d.parametersJsonSchema ? jsonSchemaInLowerCase(d.parametersJsonSchema) : jsonSchemaOfOpenApi(d.parameters ?? { type: "object", properties: {} }),
          })),
    toolChoice: toolChoiceOf(body),
    responseFormat: responseFormatOf(config),
    ...reasoningOf(config),
    stream,
  };
}

/** A validated countTokens body for `model` in the canonical form: the request it counts, kept for a gemini upstream. */
export function convertGeminiCountRequestToCanonical(body: CountTokensRequest, model: string): ChatRequest {
  const counted: GenerateContentRequest = body.generateContentRequest ?? { contents: body.contents! };
  // Gemini has a generateContentRequest name its model again; the URL's is the one served,
  // and the gemini adapter names the upstream's.
  const { model: _named, ...request } = counted;
  // How many answers it asks for does not change the prompt's count, and would keep the count to gemini channels.
  if (request.generationConfig?.candidateCount !== undefined) {
    const { candidateCount: _answers, ...config } = request.generationConfig;
    request.generationConfig = config;
  }
  return convertGeminiRequestToCanonical(request, model, false);
}
