/** A JSON Schema, or a part of one. */
export type Schema = Record<string, unknown>;

/**
 * The keywords of a JSON Schema whose values are schemas: one (`not`; `items` may also be a
 * list), a list (`anyOf`...), or a map of names to schemas (`properties`, `$defs`...). Values
 * under any other keyword (`enum`, `const`, `default`, `examples`) are data, never walked.
 */
const ONE_OR_LIST = ["items", "additionalItems", "additionalProperties", "unevaluatedItems", "unevaluatedProperties", "propertyNames", "contains", "not", "if", "then", "else", "anyOf", "allOf", "oneOf", "prefixItems"];
const BY_NAME = ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"];

export const isSchema = (value: unknown): value is Schema => value !== null && typeof value === "object" && !Array.isArray(value);

/** Whether `test` holds for each schema in `value` (a schema, or a list of them); anything else has none. */
function everyIn(value: unknown, test: (schema: Schema) => boolean): boolean {
  if (Array.isArray(value)) return value.every((item) => everyIn(item, test));
  return !isSchema(value) || everySchema(value, test);
}

/** Whether `test` holds for `schema` and every schema within it, depth first, stopping at the first that fails. */
export function everySchema(schema: Schema, test: (schema: Schema) => boolean): boolean {
  if (!test(schema)) return false;
  for (const key of ONE_OR_LIST) if (!everyIn(schema[key], test)) return false;
  for (const key of BY_NAME) {
    const named = schema[key];
    if (isSchema(named) && !Object.values(named).every((value) => everyIn(value, test))) return false;
  }
  return true;
}

export const isObjectType = (schema: Schema) => schema.type === "object" || (Array.isArray(schema.type) && schema.type.includes("object"));

/** `value` (a schema, or a list of them) with `transform` applied to each schema; anything else as it is. */
function mapIn(value: unknown, transform: (schema: Schema) => Schema): unknown {
  if (Array.isArray(value)) return value.map((item) => mapIn(item, transform));
  return isSchema(value) ? mapSchemas(value, transform) : value;
}

/** A copy of `schema` with `transform` applied to it and to every schema within it, innermost first. */
export function mapSchemas(schema: Schema, transform: (schema: Schema) => Schema): Schema {
  const copy: Schema = { ...schema };
  for (const key of ONE_OR_LIST) if (key in copy) copy[key] = mapIn(copy[key], transform);
  for (const key of BY_NAME) {
    const named = copy[key];
    if (isSchema(named)) copy[key] = Object.fromEntries(Object.entries(named).map(([name, value]) => [name, mapIn(value, transform)]));
  }
  return transform(copy);
}
