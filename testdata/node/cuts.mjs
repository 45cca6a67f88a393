// The official Node openai client, unchanged, against completions that end
// early (a shutdown, the turn's bound, a database outage at the end, a
// provider's cut). Run by completions/cuts_test.go:
//   node cuts.mjs <base URL> <api key> <user> stream|whole <message> [model]
// A streamed answer prints "content" on a line of its own once its first
// content has arrived (the test may cut it then), and every run ends with
// one JSON line of what the client saw; the Go test judges it.
import OpenAI from 'openai';

const [baseURL, apiKey, user, mode, message, model = 'solo'] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, defaultHeaders: { 'X-Test-User': user } });
const request = { model, messages: [{ role: 'user', content: message }] };

function raised(e) {
  return { name: e.constructor.name, status: e.status ?? null, code: e.code ?? null, message: String(e.message) };
}

async function stream() {
  let text = '';
  try {
    const answer = await client.chat.completions.create({ ...request, stream: true });
    for await (const chunk of answer) {
      const had = text;
      text += chunk.choices[0]?.delta?.content ?? '';
      if (!had && text) process.stdout.write('content\n');
    }
    return { text, raised: null };
  } catch (e) {
    return { text, raised: raised(e) };
  }
}

async function whole() {
  try {
    const answer = await client.chat.completions.create(request);
    return { text: answer.choices[0].message.content, raised: null };
  } catch (e) {
    return { text: '', raised: raised(e) };
  }
}

const out = mode === 'stream' ? await stream() : await whole();
process.stdout.write(JSON.stringify(out) + '\n');
