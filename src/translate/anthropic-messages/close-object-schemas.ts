type Schema = Record<string, unknown>;

/**
 * The keywords of a JSON Schema whose values are schemas: one (`not`; `items` may also be a
 * list), a list (`anyOf`...), or a map of names to schemas (`properties`, `$defs`...). Values
 * under any other keyword (`enum`, `const`, `default`, `examples`) are data, never walked.
 */
const ONE_OR_LIST = ["items", "additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties", "propertyNames", "contains", "not", "if", "then", "else", "anyOf", "allOf", "oneOf", "prefixItems"];
const BY_NAME = ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"];

const isSchema = (value: unknown): value is Schema => value !== null && typeof value === "object" && !Array.isArray(value);

/** Whether `test` holds for each schema in `value` (a schema, or a list of them); anything else has none. */
function everyIn(value: unknown, test: (schema: Schema) => boolean): boolean {
  if (Array.isArray(value)) return value.every((item) => everyIn(item, test));
  return !isSchema(value) || everySchema(value, test);
}

/** Whether `test` holds for `schema` and every schema within it, depth first, stopping at the first that fails. */
function everySchema(schema: Schema, test: (schema: Schema) => boolean): boolean {
  if (!test(schema)) return false;
  for (const key of ONE_OR_LIST) if (!everyIn(schema[key], test)) return false;
  for (const key of BY_NAME) {
    const named = schema[key];
    if (isSchema(named) && !Object.values(named).every((value) => everyIn(value, test))) return false;
  }
  return true;
}

const isObjectType = (schema: Schema) => schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object"));

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
