// The official Node openai client, unchanged, against voxgate's
// POST /v1/chat/completions. Run by completions/node_test.go:
//   node completions.mjs <base URL> <user> ok|cut
// It prints one JSON object of what the client saw; the Go test judges it.
import OpenAI from 'openai';

const [baseURL, user, mode] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: 'a-user-jwt', maxRetries: 0, defaultHeaders: { 'X-Test-User': user } });
const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

async function ok() {
  const out = {};
  const whole = await client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hello' }] });
  out.whole = { content: whole.choices[0].message.content, model: whole.model, usage: whole.usage };

  const messages = [{ role: 'user', content: "What's the weather in Paris?" }];
  const stream = await client.chat.completions.create({
    model: 'chat', messages, tools: [weather], stream: true, stream_options: { include_usage: true },
  });
  const calls = [];
  let finish = null;
  let usage = null;
  const models = new Set();
  for await (const chunk of stream) {
    models.add(chunk.model);
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      if (choice.finish_reason) finish = choice.finish_reason;
      for (const tc of choice.delta.tool_calls ?? []) {
        calls[tc.index] ??= { id: '', name: '', arguments: '' };
        if (tc.id) calls[tc.index].id = tc.id;
        if (tc.function?.name) calls[tc.index].name = tc.function.name;
        calls[tc.index].arguments += tc.function?.arguments ?? '';
      }
    }
  }
  out.streamed = { calls, finish, usage, models: [...models] };

  // The client runs its own tool and sends the result back.
  messages.push({ role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) });
  messages.push({ role: 'tool', tool_call_id: calls[0].id, content: '{"sky":"clear"}' });
  const answer = await client.chat.completions.create({ model: 'chat', messages, tools: [weather] });
  out.answer = answer.choices[0].message.content;

  try {
    await client.chat.completions.create({ model: 'no-such-route', messages: [{ role: 'user', content: 'hi' }] });
    out.missing = { status: 0 };
  } catch (e) {
    out.missing = { status: e.status, code: e.code, param: e.param };
  }
  return out;
}

async function cut() {
  let text = '';
  try {
    const stream = await client.chat.completions.create({
      model: 'solo', messages: [{ role: 'user', content: 'Tell me a story' }], stream: true,
    });
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    return { text, raised: null };
  } catch (e) {
    return { text, raised: { name: e.constructor.name, message: String(e.message), code: e.code ?? null } };
  }
}

const out = mode === 'cut' ? await cut() : await ok();
process.stdout.write(JSON.stringify(out) + '\n');
