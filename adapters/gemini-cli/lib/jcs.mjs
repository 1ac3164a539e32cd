// RFC 8785 (JCS) text of a JSON value, for a card's `summary` (SPEC APPR-02). ECMAScript's
// own JSON.stringify already writes JCS numbers and string escapes; JCS adds member order
// by UTF-16 code units, which is JavaScript's default string sort.

export function canonicalJson(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
}
