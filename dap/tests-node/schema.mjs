// The DAP JSON schema, generated from Microsoft's own protocol declarations
// (`@vscode/debugprotocol`, whose types are generated from the protocol's JSON schema) with
// typescript-json-schema, cached under target/, and a validator that picks each message's
// definition: `<Command>Response` for responses (`ErrorResponse` when unsuccessful),
// `<Event>Event` for events, the generic `Response`/`Event` for our custom requests.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const cache = path.resolve(here, '..', '..', 'target', 'dap-schema.json');

function generate() {
  const TJS = require('typescript-json-schema');
  const decl = require.resolve('@vscode/debugprotocol/lib/debugProtocol.d.ts');
  const version = require('@vscode/debugprotocol/package.json').version;
  if (fs.existsSync(cache)) {
    const s = JSON.parse(fs.readFileSync(cache, 'utf8'));
    if (s.$comment === `@vscode/debugprotocol ${version}`) return s;
  }
  const program = TJS.getProgramFromFiles([decl], { strictNullChecks: true });
  const gen = TJS.buildGenerator(program, { required: true, ignoreErrors: true });
  const names = gen.getUserSymbols().filter((n) => n.startsWith('DebugProtocol.'));
  const schema = gen.getSchemaForSymbols(names);
  schema.$comment = `@vscode/debugprotocol ${version}`;
  fs.mkdirSync(path.dirname(cache), { recursive: true });
  fs.writeFileSync(cache, JSON.stringify(schema));
  return schema;
}

let compiled = null;

/** A function from a message to null (valid) or a text listing its schema errors. */
export function validator() {
  if (!compiled) {
    const schema = generate();
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addSchema(schema, 'dap');
    compiled = { ajv, defs: new Set(Object.keys(schema.definitions)) };
  }
  const { ajv, defs } = compiled;
  const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);
  return (m) => {
    let def;
    if (m.type === 'response') {
      def = m.success ? `DebugProtocol.${cap(m.command)}Response` : 'DebugProtocol.ErrorResponse';
      if (!defs.has(def)) def = 'DebugProtocol.Response';
    } else if (m.type === 'event') {
      def = `DebugProtocol.${cap(m.event)}Event`;
      if (!defs.has(def)) def = 'DebugProtocol.Event';
    } else {
      return `unexpected message type ${JSON.stringify(m.type)}`;
    }
    const validate = ajv.getSchema(`dap#/definitions/${def}`);
    if (!validate) return `no schema definition ${def}`;
    return validate(m) ? null : `${def}: ${ajv.errorsText(validate.errors)}`;
  };
}
