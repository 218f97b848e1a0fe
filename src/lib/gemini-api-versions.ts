/**
 * The Gemini API versions whose every path is Gemini's: v1beta, the genai SDK's default, and
 * v1alpha, where Google previews features first (`httpOptions.apiVersion: "v1alpha"`). The
 * gateway serves each alike, translating to its channels as it does any Gemini request.
 */
export const GEMINI_OWN_VERSIONS = ["v1beta", "v1alpha"] as const;

/**
 * Every version the genai SDK's `apiVersion` may name with the same actions: Gemini's own and
 * v1, the stable API, whose /v1/models the OpenAI and Anthropic formats share.
 */
export const GEMINI_API_VERSIONS = [...GEMINI_OWN_VERSIONS, "v1"] as const;
