import { mapSchemas, type Schema } from "../json-schema-walk.ts";

/**
 * One schema of Gemini's OpenAPI subset (`parameters`, `responseSchema`) as JSON Schema, which
 * the canonical form and the other upstreams use: types in lower case ("OBJECT" is "object"),
 * `nullable: true` as a "null" type (and a null in its enum, which would refuse null
 * otherwise), and Gemini's own `propertyOrdering` left out, since it orders Gemini's output only.
 */
function jsonSchemaOfNode(node: Schema): Schema {
  const { nullable, propertyOrdering: _geminiOnly, ...schema } = node;
  if (typeof schema.type === "string") schema.type = schema.type.toLowerCase();
  if (nullable !== true) return schema;
  if (typeof schema.type === "string") schema.type = [schema.type, "null"];
  else if (Array.isArray(schema.anyOf)) schema.anyOf = [...schema.anyOf, { type: "null" }];
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
  return schema;
}

/** A Gemini OpenAPI-subset schema as JSON Schema; see jsonSchemaOfNode. */
export const jsonSchemaOfOpenApi = (schema: Schema): Schema => mapSchemas(schema, jsonSchemaOfNode);
