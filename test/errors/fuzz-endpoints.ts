/**
 * The JSON endpoints a caller can POST or PATCH, each with valid bodies for the body fuzz
 * test (fuzz-bodies.test.ts) to start from. Chat bodies are rich on purpose (tool calls and
 * their results, content parts, images, schemas, streams), so a mutation can reach any field
 * a translator reads.
 */

/** A 1x1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const WEATHER_SCHEMA = { type: "object", properties: { location: { type: "string", description: "City" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["location"] };
const STRICT_SCHEMA = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };

/** Admin records the PATCH endpoints change, made before the run. */
export interface FuzzFixtures {
  userId: string;
  tokenId: string;
  channelId: string;
}

export interface FuzzEndpoint {
  name: string;
  method: "POST" | "PATCH";
  /** The path for a model (chat endpoints take it in the path for Gemini). */
  path: (model: string) => string;
  /** Which key calls it. */
  caller: "api" | "admin";
  /** Models its cases cycle through; admin endpoints ignore the model. */
  models: readonly string[];
  /** Valid bodies for a model; `n` makes names and emails unique. */
  bases: ReadonlyArray<(model: string, n: number) => unknown>;
}

const chatCompletions = [
  (model: string) => ({ model, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }], temperature: 0.5, max_tokens: 64, top_p: 0.9, frequency_penalty: 0, presence_penalty: 0, stop: ["\n\n"], user: "fuzz" }),
  (model: string) => ({
    model,
    messages: [
      { role: "developer", content: [{ type: "text", text: "Use tools." }] },
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}`, detail: "low" } }] },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "18 C, light rain" },
    ],
    tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: WEATHER_SCHEMA } }],
    tool_choice: "auto",
    max_completion_tokens: 64,
  }),
  (model: string) => ({ model, messages: [{ role: "user", content: "Hello" }], stream: true, stream_options: { include_usage: true }, max_tokens: 32 }),
  (model: string) => ({ model, messages: [{ role: "user", content: "Answer in JSON" }], response_format: { type: "json_schema", json_schema: { name: "answer", strict: true, schema: STRICT_SCHEMA } }, seed: 7, logprobs: false }),
];

/** Forms only a channel of OpenAI's format carries: several answers, custom tools, allowed_tools, other part types. */
const chatCompletionsNative = [
  (model: string) => ({
    model,
    n: 2,
    messages: [
      { role: "user", content: [{ type: "text", text: "Hi" }, { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] },
      { role: "assistant", content: [{ type: "refusal", refusal: "no" }], tool_calls: [{ id: "c2", type: "custom", custom: { name: "grep", input: "x" } }] },
      { role: "tool", tool_call_id: "c2", content: "found" },
    ],
    tools: [{ type: "custom", custom: { name: "grep" } }, { type: "function", function: { name: "f", parameters: null, strict: null } }],
    tool_choice: { type: "allowed_tools", allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "f" } }] } },
    parallel_tool_calls: false,
    reasoning_effort: "low",
    stop: "END",
    response_format: { type: "json_object" },
    safety_identifier: "s",
  }),
];

const responses = [
  (model: string) => ({ model, input: "Hello", instructions: "Be brief.", max_output_tokens: 64, temperature: 0.5, top_p: 0.9, store: false }),
  (model: string) => ({
    model,
    input: [
      { role: "user", content: [{ type: "input_text", text: "Weather in Paris?" }, { type: "input_image", image_url: `data:image/png;base64,${PNG}` }] },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"location":"Paris"}' },
      { type: "function_call_output", call_id: "call_1", output: "18 C, light rain" },
    ],
    tools: [{ type: "function", name: "get_weather", description: "Weather", parameters: WEATHER_SCHEMA }],
    tool_choice: "auto",
    store: false,
  }),
  (model: string) => ({ model, input: [{ role: "user", content: "Hello" }], stream: true, store: false }),
  (model: string) => ({ model, input: "Answer in JSON", text: { format: { type: "json_schema", name: "answer", strict: true, schema: STRICT_SCHEMA } }, store: false }),
  (model: string) => ({
    model,
    input: [
      { type: "message", role: "developer", content: "Be brief." },
      { role: "assistant", content: [{ type: "output_text", text: "Earlier" }, { type: "refusal", refusal: "no" }] },
      { type: "reasoning", id: "rs_1", summary: [] },
      { role: "user", content: "Hi" },
    ],
    tool_choice: { type: "function", name: "f" },
    tools: [{ type: "function", name: "f", parameters: null, strict: null }],
    parallel_tool_calls: false,
    reasoning: { effort: "low", summary: "auto" },
    metadata: { a: "b" },
    top_logprobs: 2,
    background: false,
    store: false,
  }),
];

const messages = [
  (model: string) => ({ model, max_tokens: 64, system: "Be brief.", messages: [{ role: "user", content: "Hello" }], temperature: 0.5, top_k: 40, stop_sequences: ["END"], metadata: { user_id: "fuzz" } }),
  (model: string) => ({
    model,
    max_tokens: 64,
    system: [{ type: "text", text: "Use tools.", cache_control: { type: "ephemeral" } }],
    messages: [
      { role: "user", content: [{ type: "text", text: "Weather in Paris?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] },
      { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool_use", id: "toolu_1", name: "get_weather", input: { location: "Paris" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18 C" }] }] },
    ],
    tools: [{ name: "get_weather", description: "Weather", input_schema: WEATHER_SCHEMA }],
    tool_choice: { type: "auto" },
  }),
  (model: string) => ({ model, max_tokens: 32, messages: [{ role: "user", content: "Hello" }], stream: true }),
  (model: string) => ({ model, max_tokens: 2048, thinking: { type: "enabled", budget_tokens: 1024 }, messages: [{ role: "user", content: "Think" }, { role: "assistant", content: "Sure:" }] }),
];

/** Forms only a channel of Anthropic's format carries: documents, server tools, thinking blocks. */
const messagesNative = [
  (model: string) => ({
    model,
    max_tokens: 64,
    messages: [
      { role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }, { type: "document", source: { type: "text", media_type: "text/plain", data: "doc" } }, { type: "text", text: "Sum up" }] },
      { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "sig" }, { type: "tool_use", id: "toolu_2", name: "f", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "done", is_error: true }] },
    ],
    tools: [{ name: "f", input_schema: STRICT_SCHEMA, strict: true }, { type: "web_search_20250305", name: "web_search", max_uses: 2 }],
    tool_choice: { type: "tool", name: "f", disable_parallel_tool_use: true },
    output_config: { format: { type: "json_schema", schema: STRICT_SCHEMA }, effort: "low" },
    top_p: 0.9,
  }),
];

const countTokens = [
  (model: string) => ({ model, system: "Be brief.", messages: [{ role: "user", content: "Hello" }] }),
  (model: string) => ({ model, messages: [{ role: "user", content: [{ type: "text", text: "Weather?" }] }], tools: [{ name: "get_weather", description: "Weather", input_schema: WEATHER_SCHEMA }] }),
];

const geminiChat = [
  () => ({
    contents: [{ role: "user", parts: [{ text: "Hello" }] }],
    systemInstruction: { parts: [{ text: "Be brief." }] },
    generationConfig: { temperature: 0.5, topP: 0.9, topK: 40, maxOutputTokens: 64, stopSequences: ["END"] },
    safetySettings: [{ category: "HARM_CATEGORY_HARASSMENT", threshold: "BLOCK_NONE" }],
  }),
  () => ({
    contents: [
      { role: "user", parts: [{ text: "Weather in Paris?" }, { inlineData: { mimeType: "image/png", data: PNG } }] },
      { role: "model", parts: [{ functionCall: { name: "get_weather", args: { location: "Paris" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { temperature: 18 } } }] },
    ],
    tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather", parameters: { type: "OBJECT", properties: { location: { type: "STRING" } }, required: ["location"] } }] }],
    toolConfig: { functionCallingConfig: { mode: "AUTO" } },
  }),
  () => ({ contents: [{ role: "user", parts: [{ text: "Answer in JSON" }] }], generationConfig: { responseMimeType: "application/json", responseSchema: { type: "OBJECT", properties: { answer: { type: "STRING" } } } } }),
];

/** Forms only a channel of Gemini's format carries: several candidates, thoughts, JSON-schema forms. */
const geminiNative = [
  () => ({
    contents: [
      { role: "user", parts: [{ text: "Hi" }, { fileData: { mimeType: "image/png", fileUri: "https://example.com/a.png" } }] },
      { role: "model", parts: [{ text: "thinking", thought: true }, { functionCall: { name: "f", args: null, id: "fc1" } }] },
      { role: "user", parts: [{ functionResponse: { name: "f", response: { ok: true }, id: "fc1" } }] },
    ],
    systemInstruction: "Be brief.",
    generationConfig: { candidateCount: 2, seed: 3, presencePenalty: 0.5, frequencyPenalty: -0.5, responseJsonSchema: STRICT_SCHEMA, responseMimeType: "application/json", thinkingConfig: { thinkingBudget: -1, includeThoughts: true } },
    tools: [{ functionDeclarations: [{ name: "f", parametersJsonSchema: { type: "object" } }] }],
    toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["f"] } },
  }),
];

const geminiCount = [
  () => ({ contents: [{ role: "user", parts: [{ text: "Hello" }] }] }),
  (model: string) => ({ generateContentRequest: { model: `models/${model}`, contents: [{ role: "user", parts: [{ text: "Hello" }] }], generationConfig: { maxOutputTokens: 8 } } }),
];

/** Chat models: the mock's and one of each remote kind (see fuzz-bodies.test.ts). */
export const CHAT_MODELS = ["demo-chat", "fuzz-gpt", "fuzz-claude", "fuzz-gemini"] as const;
/** Media models by kind: the mock's, then one on an OpenAI-compatible channel (see fuzz-bodies.test.ts). */
export const MEDIA_MODELS = { embeddings: ["demo-embed", "fuzz-embed"], rerank: ["demo-rerank", "fuzz-rerank"], images: ["demo-image", "fuzz-image"], speech: ["demo-tts", "fuzz-tts"] } as const;
const ADMIN = [""];

/** Every JSON endpoint, in the order the fuzz test runs them (settings last: a patch changes every later request). */
export function fuzzEndpoints(fixtures: FuzzFixtures): FuzzEndpoint[] {
  const api = (name: string, path: string | ((model: string) => string), models: readonly string[], bases: FuzzEndpoint["bases"]): FuzzEndpoint => ({
    name,
    method: "POST",
    path: typeof path === "string" ? () => path : path,
    caller: "api",
    models,
    bases,
  });
  const admin = (name: string, method: "POST" | "PATCH", path: string, bases: FuzzEndpoint["bases"]): FuzzEndpoint => ({ name, method, path: () => path, caller: "admin", models: ADMIN, bases });
  return [
    api("chat completions", "/v1/chat/completions", CHAT_MODELS, chatCompletions),
    api("chat completions, native forms", "/v1/chat/completions", ["fuzz-gpt"], chatCompletionsNative),
    api("responses", "/v1/responses", CHAT_MODELS, responses),
    api("responses input_tokens", "/v1/responses/input_tokens", CHAT_MODELS, [(model) => ({ model, input: "Hello", instructions: "Be brief.", tools: [{ type: "function", name: "f", parameters: WEATHER_SCHEMA }] })]),
    api("messages", "/v1/messages", CHAT_MODELS, messages),
    api("messages, native forms", "/v1/messages", ["fuzz-claude"], messagesNative),
    api("messages count_tokens", "/v1/messages/count_tokens", CHAT_MODELS, countTokens),
    api("generateContent", (model) => `/v1beta/models/${model}:generateContent`, CHAT_MODELS, geminiChat),
    api("streamGenerateContent sse", (model) => `/v1beta/models/${model}:streamGenerateContent?alt=sse`, CHAT_MODELS, geminiChat),
    api("generateContent, native forms", (model) => `/v1beta/models/${model}:generateContent`, ["fuzz-gemini"], geminiNative),
    api("streamGenerateContent sse, native forms", (model) => `/v1beta/models/${model}:streamGenerateContent?alt=sse`, ["fuzz-gemini"], geminiNative),
    api("streamGenerateContent array", (model) => `/v1beta/models/${model}:streamGenerateContent`, CHAT_MODELS, geminiChat),
    api("countTokens", (model) => `/v1beta/models/${model}:countTokens`, CHAT_MODELS, geminiCount),
    api("embedContent", (model) => `/v1beta/models/${model}:embedContent`, MEDIA_MODELS.embeddings, [
      () => ({ content: { parts: [{ text: "hello" }, { text: "world" }] }, outputDimensionality: 64, taskType: "RETRIEVAL_QUERY", title: "t" }),
    ]),
    api("batchEmbedContents", (model) => `/v1beta/models/${model}:batchEmbedContents`, MEDIA_MODELS.embeddings, [
      (model) => ({ requests: [{ model: `models/${model}`, content: { parts: [{ text: "a" }] }, outputDimensionality: 64 }, { model: `models/${model}`, content: { parts: [{ text: "b" }] }, outputDimensionality: 64 }] }),
    ]),
    api("embeddings", "/v1/embeddings", MEDIA_MODELS.embeddings, [
      (model) => ({ model, input: ["hello", "world"], encoding_format: "float", dimensions: 64, user: "fuzz" }),
      (model) => ({ model, input: "hello", encoding_format: "base64" }),
    ]),
    api("rerank", "/v1/rerank", MEDIA_MODELS.rerank, [(model) => ({ model, query: "cats", documents: ["cats purr", "dogs bark", "birds sing"], top_n: 2, return_documents: true })]),
    api("images", "/v1/images/generations", MEDIA_MODELS.images, [
      (model) => ({ model, prompt: "a cat", n: 1, size: "1024x1024", quality: "standard", style: "vivid", response_format: "b64_json" }),
      (model) => ({ model, prompt: "a dog" }),
    ]),
    api("speech", "/v1/audio/speech", MEDIA_MODELS.speech, [
      (model) => ({ model, input: "hello there", voice: "alloy", response_format: "wav", speed: 1.5 }),
      (model) => ({ model, input: "hi", voice: { id: "voice_1" } }),
    ]),
    admin("POST users", "POST", "/v1/admin/users", [(_, n) => ({ email: `fuzz-${n}@example.com`, balance: 1.5, plan: "pro", status: "active" })]),
    admin("PATCH users", "PATCH", `/v1/admin/users/${fixtures.userId}`, [() => ({ email: "fuzz-patched@example.com", plan: "pro", status: "active" })]),
    admin("POST tokens", "POST", "/v1/admin/tokens", [
      (_, n) => ({ user_id: fixtures.userId, name: `fuzz ${n}`, permissions: ["chat", "embeddings"], role: "user", expires_at: "2099-01-01T00:00:00Z", models: ["demo-chat"], requests_per_minute: 60, tokens_per_minute: 1000 }),
    ]),
    admin("PATCH tokens", "PATCH", `/v1/admin/tokens/${fixtures.tokenId}`, [
      () => ({ name: "fuzz patched", permissions: ["chat"], status: "active", expires_at: null, models: null, requests_per_minute: 5, tokens_per_minute: null }),
    ]),
    admin("POST prices", "POST", "/v1/admin/prices", [
      () => ({ model: "fuzz-priced", mode: "chat", input_per_million: 0.5, output_per_million: 1.5, cached_input_per_million: 0.1, cache_write_per_million: 0.6 }),
      () => ({ model: "fuzz-image-priced", mode: "image", per_image: 0.04, image_prices: { "1024x1024/standard": 0.04, "1792x1024/hd": 0.12 } }),
    ]),
    admin("POST channels", "POST", "/v1/admin/channels", [
      (_, n) => ({ name: `fuzz ${n}`, type: "mock", models: [`fuzz-made-${n}`], model_map: { [`fuzz-made-${n}`]: "demo-chat" }, priority: 1, weight: 2, status: "active" }),
      (_, n) => ({ name: `fuzz remote ${n}`, type: "openai", base_url: "http://127.0.0.1:9/v1", api_key: "k", models: [`fuzz-remote-${n}`], status: "disabled" }),
    ]),
    admin("PATCH channels", "PATCH", `/v1/admin/channels/${fixtures.channelId}`, [
      () => ({ name: "fuzz patched", models: ["fuzz-patched"], model_map: { "fuzz-patched": "demo-chat" }, priority: 2, weight: 3, status: "active", base_url: null, api_key: null }),
    ]),
    admin("POST topup", "POST", "/v1/admin/topup", [() => ({ user_id: fixtures.userId, amount: 1.25, payment_method: "balance" })]),
    admin("PATCH settings", "PATCH", "/v1/admin/settings", [
      () => ({
        system_name: "Fuzz Gateway",
        features: { registration_enabled: false, maintenance_mode: false, default_currency: "USD" },
        rate_limits: { requests_per_minute: 10, tokens_per_minute: 100000 },
        plans: { fuzzplan: { requests_per_minute: 5, tokens_per_minute: 500 } },
        allow_unpriced_models: true,
      }),
    ]),
  ];
}
