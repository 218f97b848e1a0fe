import { everySchema, mapSchemas, type Schema } from "../json-schema-walk.ts";

const typeNameInLowerCase = (name: unknown) => (typeof name === "string" ? name.toLowerCase() : name);
const typeInLowerCase = (type: unknown) => (Array.isArray(type) ? type.map(typeNameInLowerCase) : typeNameInLowerCase(type));
const isLowerCase = (name: unknown) => typeof name !== "string" || name === name.toLowerCase();
const hasLowerCaseType = (node: Schema) => (Array.isArray(node.type) ? node.type.every(isLowerCase) : isLowerCase(node.type));

/**
 * One schema of Gemini's OpenAPI subset (`parameters`, `responseSchema`) as JSON Schema, which
 * the canonical form and the other upstreams use: types in lower case ("OBJECT" is "object"),
 * `nullable: true` as a "null" type (and a null in its enum, which would refuse null
 * otherwise), and Gemini's own `propertyOrdering` left out, since it orders Gemini's output only.
 */
function jsonSchemaOfNode(node: Schema): Schema {
  const { nullable, propertyOrdering: _geminiOnly, ...schema } = node;
  if (typeof schema.type === "string") schema.type = typeNameInLowerCase(schema.type);
  if (nullable !== true) return schema;
  if (typeof schema.type === "string") schema.type = [schema.type, "null"];
  else if (Array.isArray(schema.anyOf)) schema.anyOf = [...schema.anyOf, { type: "null" }];
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
  return schema;
}

/** A Gemini OpenAPI-subset schema as JSON Schema; see jsonSchemaOfNode. */
export const jsonSchemaOfOpenApi = (schema: Schema): Schema => mapSchemas(schema, jsonSchemaOfNode);

/**
 * One of Gemini's JSON Schema fields (`responseJsonSchema`, `parametersJsonSchema`) with its
 * type names in lower case, as JSON Schema spells them and OpenAI and Anthropic require.
 * Gemini takes OpenAPI's upper-case names there too ("OBJECT"), and Gemini CLI writes its
 * router's schema so. Returned as it is when already lower case, as nearly every one is.
 */
export function jsonSchemaInLowerCase(schema: Schema): Schema {
  if (everySchema(schema, hasLowerCaseType)) return schema;
  return mapSchemas(schema, (node) => (node.type === undefined ? node : { ...node, type: typeInLowerCase(node.type) }));
}
