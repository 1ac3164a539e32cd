// capconf's JSON Lines framing (SPEC PROTO-03): bytes in, one response line per non-blank
// line out, never an invalid line and never an exit on bad input. Pure protocol plumbing:
// nothing here is a capability decision, so nothing here is Gemini's.

const decoder = new TextDecoder('utf-8', {fatal: true});

export function protocolError(id, code, message, pathParts) {
  const error = {code, message};
  if (pathParts) error.path = pathParts;
  return {id, ok: false, error};
}

/** The first lone surrogate in a parsed value: its JSON path, or null. */
export function loneSurrogatePath(value, at = []) {
  const bad = (s) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
  if (typeof value === 'string') return bad(value) ? at : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const p = loneSurrogatePath(value[i], [...at, i]);
      if (p) return p;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (bad(k)) return at;
      const p = loneSurrogatePath(v, [...at, k]);
      if (p) return p;
    }
  }
  return null;
}

export const MAX_DEPTH = 64;

/** The path of the first value nested deeper than MAX_DEPTH (the request is level 1), or null. */
export function tooDeepPath(value) {
  const stack = [[value, [], 1]];
  while (stack.length) {
    const [v, at, depth] = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_DEPTH) return at;
    const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i -= 1) stack.push([entries[i][1], [...at, entries[i][0]], depth + 1]);
  }
  return null;
}

/** One line's bytes -> {request} or {response} (an error answer for bad input). */
export function readRequest(bytes) {
  let text;
  try {
    text = decoder.decode(bytes);
  } catch {
    return {response: protocolError(null, 'bad_json', 'the line is not valid UTF-8')};
  }
  if (/^[ \t\r]*$/.test(text)) return {blank: true};
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const code = error instanceof RangeError ? 'bad_request' : 'bad_json';
    return {response: protocolError(null, code, `not one JSON text: ${error.message}`)};
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return {response: protocolError(null, 'bad_request', 'a request is a JSON object')};
  }
  if (!Number.isSafeInteger(value.id)) {
    return {response: protocolError(null, 'bad_request', '`id` must be an integer', ['id'])};
  }
  const deep = tooDeepPath(value);
  if (deep) {
    return {response: protocolError(value.id, 'bad_request', `nested deeper than ${MAX_DEPTH} levels`, deep)};
  }
  const surrogate = loneSurrogatePath(value);
  if (surrogate) {
    return {response: protocolError(value.id, 'bad_request', 'a string holds a lone surrogate', surrogate)};
  }
  if (typeof value.op !== 'string') {
    return {response: protocolError(value.id, 'bad_request', 'missing `op`', ['op'])};
  }
  const args = value.args ?? {};
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    return {response: protocolError(value.id, 'bad_request', '`args` must be an object', ['args'])};
  }
  return {request: {id: value.id, op: value.op, args}};
}

/** Split a byte stream into lines (LF), keeping a partial tail for the next chunk. */
export class LineSplitter {
  constructor() {
    this.tail = Buffer.alloc(0);
  }

  push(chunk) {
    const data = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    const lines = [];
    let start = 0;
    for (let i = data.indexOf(10, start); i !== -1; i = data.indexOf(10, start)) {
      lines.push(data.subarray(start, i));
      start = i + 1;
    }
    this.tail = Buffer.from(data.subarray(start));
    return lines;
  }

  end() {
    const rest = this.tail;
    this.tail = Buffer.alloc(0);
    return rest.length ? [rest] : [];
  }
}
