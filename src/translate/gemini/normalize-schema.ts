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
