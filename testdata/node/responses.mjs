// The official Node openai client, unchanged, against POST /v1/responses
// and GET/DELETE /v1/responses/{id}. Run by responses/node_test.go:
//   node responses.mjs <base URL> <user> create|stream|continue|retrieve|items|delete|parse|parse-stream [arg] [message]
// create and stream take a message; continue takes the previous response's
// id and a message; retrieve, items and delete take an id; parse and
// parse-stream take a route and a message, and ask for planFormat. It prints one JSON
// object of what the client saw, or of the APIError it raised; the Go test
// judges it.
import OpenAI from 'openai';

const [baseURL, user, scenario, arg, message] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'a-user-jwt', maxRetries: 0, defaultHeaders: { 'X-Test-User': user } });

// raised is what the client threw: its class (an APIError subclass names
// the status: RateLimitError for 429, UnprocessableEntityError for 422),
// whether it is an APIError at all, and the status and code it read.
function raised(e) {
  return { ok: false, name: e.constructor.name, apiError: e instanceof OpenAI.APIError, status: e.status ?? null,
    code: e.code ?? null, message: String(e.message) };
}

// planFormat is a strict json_schema text.format, as an app using
// structured outputs sends one.
const planFormat = { type: 'json_schema', name: 'plan', strict: true, schema: {
  type: 'object', additionalProperties: false, required: ['title', 'level', 'days'],
  properties: { title: { type: 'string' }, level: { type: 'string', enum: ['easy', 'hard'] }, days: { type: 'integer', minimum: 3 } } } };

async function run() {
  switch (scenario) {
    case 'create': {
      const r = await client.responses.create({ model: 'chat', input: arg });
      return { ok: true, id: r.id, status: r.status, text: r.output_text, usage: r.usage };
    }
    case 'stream': {
      const types = [];
      let text = '';
      const stream = client.responses.stream({ model: 'chat', input: arg });
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      const r = await stream.finalResponse();
      return { ok: true, id: r.id, status: r.status, text, types };
    }
    case 'continue': {
      const r = await client.responses.create({ model: 'chat', input: message, previous_response_id: arg });
      return { ok: true, id: r.id, status: r.status, text: r.output_text, previous: r.previous_response_id };
    }
    case 'retrieve': {
      const r = await client.responses.retrieve(arg);
      return { ok: true, id: r.id, status: r.status, text: r.output_text };
    }
    case 'items': {
      const items = [];
      for await (const item of client.responses.inputItems.list(arg)) items.push({ type: item.type, role: item.role ?? null });
      return { ok: true, items };
    }
    case 'parse': {
      const r = await client.responses.parse({ model: arg, input: message, text: { format: planFormat } });
      return { ok: true, status: r.status, parsed: r.output_parsed, format: r.text.format };
    }
    case 'parse-stream': {
      const stream = client.responses.stream({ model: arg, input: message, text: { format: planFormat } });
      let text = '';
      for await (const event of stream) {
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      // The stream parses (and sets output_text) only for a helper's
      // format (zodTextFormat), so the final text is read from its items.
      const r = await stream.finalResponse();
      const final = r.output.filter((i) => i.type === 'message').flatMap((i) => i.content).map((c) => c.text).join('');
      return { ok: true, status: r.status, final, format: r.text.format.type, text };
    }
    case 'delete': {
      await client.responses.delete(arg);
      return { ok: true };
    }
  }
  throw new Error(`unknown scenario ${scenario}`);
}

let out;
try {
  out = await run();
} catch (e) {
  out = raised(e);
}
process.stdout.write(JSON.stringify(out) + '\n');
