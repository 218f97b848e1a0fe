import { everySchema, isObjectType, isSchema, type Schema } from "../json-schema-walk.ts";

/**
 * An object schema that names its properties and says nothing of others: JSON Schema lets
 * such an object carry more keys, which Anthropic's structured outputs refuse to leave open.
 */
const isOpenByDefault = (schema: Schema) => isObjectType(schema) && isSchema(schema.properties) && !Object.hasOwn(schema, "additionalProperties");

/**
 * A schema for Anthropic's structured outputs (`output_config.format`, a strict tool's
 * input_schema), which refuse with a 400 any object schema without `additionalProperties:
 * false`. OpenAI's strict schemas already close every object, but its other schemas, and
 * Gemini's (whose `responseSchema` cannot say it), leave it unsaid: those objects are closed
 * here, since an answer without extra keys still matches the caller's schema. An object the
 * caller left open on purpose (`additionalProperties: true`, or a schema for the other keys)
 * is sent as it is, as is one without properties (a map of any keys), which closing would
 * leave nothing but `{}`: the upstream's 400 tells the caller instead. The caller's schema is
 * not changed, and one with nothing to close is sent as it is, uncopied.
 */
export function closeObjectSchemas(schema: Schema): Schema {
  if (everySchema(schema, (node) => !isOpenByDefault(node))) return schema;
  const closed = structuredClone(schema);
  everySchema(closed, (node) => {
    if (isOpenByDefault(node)) node.additionalProperties = false;
    return true;
  });
  return closed;
}
