// The official Node openai client, unchanged and with its default retries,
// against what voxgate refuses before or instead of an answer. Run by
// completions/refusal_node_test.go:
//   node requests.mjs <base URL> <user>[/<plan>] <scenario> [argument]
// It prints one JSON object of what the client saw (and how long the call
// took, retries and their sleeps included); the Go test judges it and
// counts the requests the gateway saw.
import OpenAI from 'openai';

const [baseURL, caller, scenario, arg] = process.argv.slice(2);
const [user, plan] = caller.split('/');
const headers = { 'X-Test-User': user, ...(plan ? { 'X-Test-Plan': plan } : {}) };
const client = new OpenAI({ baseURL, apiKey: 'a-user-jwt', defaultHeaders: headers });

// call runs fn and reports its result or the APIError it raised, with the
// time it took.
async function call(fn) {
  const started = Date.now();
  try {
    const value = await fn();
    return { ok: true, value, ms: Date.now() - started };
  } catch (e) {
    return {
      ok: false,
      ms: Date.now() - started,
      name: e.constructor.name,
      status: e.status ?? null,
      code: e.code ?? null,
      param: e.param ?? null,
      type: e.type ?? null,
      message: String(e.message),
      error: e.error ?? null,
      retryAfter: e.headers?.get('retry-after') ?? null,
      shouldRetry: e.headers?.get('x-should-retry') ?? null,
    };
  }
}

const scenarios = {
  // A chat completion with the body given (model "chat" unless it says).
  async complete() {
    const body = JSON.parse(arg);
    return call(async () => {
      const out = await client.chat.completions.create({ model: 'chat', ...body });
      return { content: out.choices[0].message.content, calls: out.choices[0].message.tool_calls ?? [] };
    });
  },
  // models.retrieve of the id given.
  async retrieve() {
    return call(() => client.models.retrieve(arg));
  },
};

const run = scenarios[scenario];
if (!run) throw new Error(`no scenario ${scenario}`);
process.stdout.write(JSON.stringify(await run()) + '\n');
