import * as v from "valibot";
import { integerAtLeast, integerInRange, numberInRange } from "../../lib/validate.ts";
import { JsonObjectSchema, nullAsAbsent, objectOnly } from "../../lib/schemas.ts";
import { googleBase64ToStandard } from "../../lib/base64.ts";

/**
 * How much the model thinks: a budget of tokens (0 off, -1 the model's choice), or a level
 * (translate/reasoning.ts knows Gemini's; another reaches a gemini upstream as sent); and
 * whether the answer shows thought summaries.
 */
const ThinkingConfig = objectOnly(
  v.looseObject({
    thinkingBudget: nullAsAbsent(v.pipe(v.number("must be an integer"), v.integer("must be an integer"), v.minValue(-1, "must be -1 (dynamic) or more"))),
    includeThoughts: nullAsAbsent(v.boolean("must be a boolean")),
    thinkingLevel: nullAsAbsent(v.string("must be a string")),
  }),
);

/**
 * Bytes as Gemini takes them, base64 in any form Google decodes, made standard and padded; any
 * other string is refused here, as Google refuses it with 400, before a channel of any kind
 * is called (an Anthropic or OpenAI upstream would refuse it too, or read it as other bytes).
 */
const Base64Bytes = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const standard = googleBase64ToStandard(dataset.value);
    if (standard !== null) return standard;
    addIssue({ message: "must be base64 (the standard or URL-safe alphabet, padded or not), not a URL or other text" });
    return NEVER;
  }),
);

export const TextPart = v.looseObject({ text: v.string() });
/** An inlineData part, to tell a parsed part's kind by (its data is checked once, by the request's schema). */
export const InlineDataPart = v.looseObject({ inlineData: v.object({ mimeType: v.string(), data: v.string() }) });
const CheckedInlineDataPart = v.looseObject({ inlineData: v.object({ mimeType: v.string(), data: Base64Bytes }) });
export const FileDataPart = v.looseObject({ fileData: v.object({ mimeType: nullAsAbsent(v.string()), fileUri: v.string() }) });
export const FunctionCallPart = v.looseObject({
  functionCall: v.looseObject({ name: v.string(), args: nullAsAbsent(JsonObjectSchema), id: nullAsAbsent(v.string()) }),
});
const FUNCTION_RESPONSE_FIELDS = { name: v.string(), response: JsonObjectSchema, id: nullAsAbsent(v.string()) };
export const FunctionResponsePart = v.looseObject({
  functionResponse: v.looseObject({ ...FUNCTION_RESPONSE_FIELDS, parts: nullAsAbsent(v.array(v.unknown())) }),
});
/**
 * Media a function returned (Gemini 3's multimodal function responses): bytes inline, checked
 * as inlineData's are, or a file by URI. displayName and other fields ride along untouched.
 */
const FunctionResponseMedia = v.union(
  [
    v.looseObject({ inlineData: v.looseObject({ mimeType: v.string(), data: Base64Bytes }) }),
    v.looseObject({ fileData: v.looseObject({ mimeType: nullAsAbsent(v.string()), fileUri: v.string() }) }),
  ],
  "a function response part needs inlineData or fileData",
);
const CheckedFunctionResponsePart = v.looseObject({
  functionResponse: v.looseObject({ ...FUNCTION_RESPONSE_FIELDS, parts: nullAsAbsent(v.array(FunctionResponseMedia, "must be an array of parts")) }),
});

/**
 * The model's own work with Gemini's built-in tools, as a chat history records it: code it ran
 * and what came of it, and its calls of server-side tools (search, URL context) with their
 * answers. Sent as they are to a gemini upstream; no other upstream ran them.
 */
export const SERVER_WORK_FIELDS = ["executableCode", "codeExecutionResult", "toolCall", "toolResponse"] as const;
const ServerWorkPart = v.union(SERVER_WORK_FIELDS.map((field) => v.looseObject({ [field]: JsonObjectSchema })));

const Part = v.union(
  [TextPart, CheckedInlineDataPart, FileDataPart, FunctionCallPart, CheckedFunctionResponsePart, ServerWorkPart],
  `a part needs one of text, inlineData, fileData, functionCall, functionResponse, ${SERVER_WORK_FIELDS.join(", ")}`,
);

const Content = v.object({
  role: nullAsAbsent(v.picklist(["user", "model", "function"], "must be 'user' or 'model'")),
  parts: v.pipe(v.array(Part, "must be an array of parts"), v.minLength(1, "must contain at least one part")),
});

const Contents = v.pipe(v.array(Content, "must be an array of contents"), v.minLength(1, "must contain at least one content"));

const FunctionDeclaration = v.looseObject({
  // Gemini's rule: letters, digits, underscores, dots, colons and dashes, at most 128.
  name: v.pipe(v.string(), v.regex(/^[a-zA-Z0-9_.:-]{1,128}$/, "function name must be 1-128 letters, digits, '_', '.', ':' or '-'")),
  description: nullAsAbsent(v.string()),
  parameters: nullAsAbsent(JsonObjectSchema),
  parametersJsonSchema: nullAsAbsent(JsonObjectSchema),
});

/** The body of :generateContent / :streamGenerateContent, validated as spec 4.3. */
export const GenerateContentRequestSchema = v.looseObject({
  contents: Contents,
  systemInstruction: nullAsAbsent(v.union([v.string(), v.object({ role: nullAsAbsent(v.string()), parts: v.array(v.looseObject({ text: nullAsAbsent(v.string()) })) })])),
  generationConfig: nullAsAbsent(
    objectOnly(v.looseObject({
      temperature: nullAsAbsent(numberInRange(0, 2)),
      topP: nullAsAbsent(numberInRange(0, 1)),
      topK: nullAsAbsent(integerAtLeast(1)),
      maxOutputTokens: nullAsAbsent(integerAtLeast(1)),
      stopSequences: nullAsAbsent(v.pipe(v.array(v.string()), v.maxLength(5, "at most 5 stop sequences"))),
      // How many answers: more than one only a gemini upstream gives. Gemini documents at most 8.
      candidateCount: nullAsAbsent(integerInRange(1, 8)),
      presencePenalty: nullAsAbsent(numberInRange(-2, 2)),
      frequencyPenalty: nullAsAbsent(numberInRange(-2, 2)),
      seed: nullAsAbsent(v.pipe(v.number(), v.integer())),
      responseMimeType: nullAsAbsent(v.string("must be a string")),
      responseSchema: nullAsAbsent(JsonObjectSchema),
      responseJsonSchema: nullAsAbsent(JsonObjectSchema),
      thinkingConfig: nullAsAbsent(ThinkingConfig),
    })),
  ),
  tools: nullAsAbsent(v.array(objectOnly(v.looseObject({ functionDeclarations: nullAsAbsent(v.array(FunctionDeclaration)) })))),
  toolConfig: nullAsAbsent(
    objectOnly(v.looseObject({
      functionCallingConfig: nullAsAbsent(
        objectOnly(v.looseObject({
          mode: nullAsAbsent(v.picklist(["AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED"])),
          allowedFunctionNames: nullAsAbsent(v.array(v.string())),
        })),
      ),
    })),
  ),
});

export type GenerateContentRequest = v.InferOutput<typeof GenerateContentRequestSchema>;

/**
 * The body of :countTokens: bare `contents` (what the genai SDK sends), or a whole
 * `generateContentRequest` (system instruction and tools counted too), which wins when both
 * are sent, as at Gemini. Any other field is refused, as Gemini does: a system instruction
 * beside `contents` would otherwise go uncounted without a word.
 */
export const CountTokensRequestSchema = v.pipe(
  v.strictObject(
    { contents: nullAsAbsent(Contents), generateContentRequest: nullAsAbsent(GenerateContentRequestSchema) },
    "is not a field of a countTokens body (a system instruction, tools and settings go inside 'generateContentRequest')",
  ),
  v.check((body) => body.contents !== undefined || body.generateContentRequest !== undefined, "'contents' or 'generateContentRequest' is required"),
);

export type CountTokensRequest = v.InferOutput<typeof CountTokensRequestSchema>;
