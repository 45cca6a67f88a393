// The OpenAI Agents SDK (@openai/agents), unchanged, running an agent
// with one function tool through voxgate's POST /v1/responses. Run by
// responses/node_test.go (TestNodeAgentsSDK):
//   node agents.mjs <base URL> <user> run|stream <message>
// The model (the simulator's script) calls get_weather; the tool runs
// here, in the agent, and its output goes back for the final answer. It
// prints one JSON object: the final output, how many times the tool ran
// and with what, or the error raised; the Go test judges it.
import OpenAI from 'openai';
import { Agent, run, tool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from '@openai/agents';
import { z } from 'zod';

const [baseURL, user, mode, message] = process.argv.slice(2);

// voxgate's base URL and a user's token, as an app sets them; the test
// fixture names the user by a header. Traces are not exported: they
// would go to OpenAI, not to voxgate.
setDefaultOpenAIClient(new OpenAI({ baseURL, apiKey: 'a-user-jwt', maxRetries: 0, defaultHeaders: { 'X-Test-User': user } }));
setOpenAIAPI('responses');
setTracingDisabled(true);

const ran = [];
const getWeather = tool({
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: z.object({ city: z.string() }),
  async execute({ city }) {
    ran.push(city);
    return JSON.stringify({ city, sky: 'sunny' });
  },
});

const agent = new Agent({ name: 'Weather', instructions: 'Answer with the weather.', model: 'chat', tools: [getWeather] });

async function go() {
  if (mode === 'stream') {
    const result = await run(agent, message, { stream: true });
    const types = new Set();
    for await (const ev of result.toStream()) {
      // The SDK passes each of the API's events on as a 'model' event.
      if (ev.type === 'raw_model_stream_event' && ev.data.type === 'model') types.add(ev.data.event.type);
    }
    await result.completed;
    return { ok: true, output: result.finalOutput, ran, types: [...types], turns: result.rawResponses.length };
  }
  const result = await run(agent, message);
  return { ok: true, output: result.finalOutput, ran, turns: result.rawResponses.length };
}

let out;
try {
  out = await go();
} catch (e) {
  out = { ok: false, name: e.constructor.name, status: e.status ?? null, message: String(e.message), ran };
}
process.stdout.write(JSON.stringify(out) + '\n');
