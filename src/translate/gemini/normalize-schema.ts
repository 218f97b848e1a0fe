/**
 * Gemini function schemas use OpenAPI-style upper-case types ("OBJECT"); JSON Schema, which
 * the canonical form and other upstreams use, wants lower case. Applied recursively.
 */
export function lowerCaseSchemaTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerCaseSchemaTypes);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = key === "type" && typeof value === "string" ? value.toLowerCase() : lowerCaseSchemaTypes(value);
  }
  return out;
}

/** JSON Schema keywords Gemini's `parameters` rejects; dropped when sending to Gemini. */
const UNSUPPORTED_BY_GEMINI = new Set(["$schema", "additionalProperties", "strict"]);

/** A JSON Schema cleaned of keywords Gemini's function declarations do not accept. */
export function schemaForGemini(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(schemaForGemini);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!UNSUPPORTED_BY_GEMINI.has(key)) out[key] = schemaForGemini(value);
  }
  return out;
}
